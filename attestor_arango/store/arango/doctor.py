"""``arango_doctor``: what an operator needs to know before trusting the deployment.

Reports server version against the 3.12.6 floor, whether ``--vector-index`` is on, every
collection / index / view of ``schemas/`` (present, missing, drifted; view links that the
server silently dropped) and the vector index's training state. Read-only; it never raises.

The result carries the raw facts plus ``checks``: a list of ``{name, ok, detail, fix,
warning}`` the top-level ``attestor-arango doctor`` prints (a failed warning does not fail
the doctor: the exact cosine scan answers while the vector index is missing).
"""

from __future__ import annotations

from typing import Any

from arango.exceptions import ArangoError

from attestor_arango.config import Config
from attestor_arango.errors import StoreError, without_credentials
from attestor_arango.store.arango.connect import (
    MIN_SERVER_VERSION,
    PINNED_IMAGE,
    _connect,
    make_client,
)
from attestor_arango.store.arango.executor import Executor
from attestor_arango.store.arango.registry import Registry
from attestor_arango.store.arango.schema import (
    index_matches,
    load_schema,
    missing_view_links,
    vector_index_state,
    version_tuple,
)

INIT_FIX = "run `attestor-arango init --backend arangodb`"


def _check(
    name: str, ok: bool, detail: str, fix: str | None = None, *, warning: bool = False
) -> dict[str, Any]:
    return {
        "name": name,
        "ok": ok,
        "detail": detail,
        "fix": None if ok else fix,
        "warning": warning,
    }


def _vector_option(client: Any, config: Config) -> Any:
    """The server's ``vector-index`` option; needs _system access (``/_admin/options``)."""
    settings = config.arango
    try:
        sys_db = client.db(
            "_system", settings.username, settings.password.get_secret_value(), verify=False
        )
        options = sys_db.options()
    except (ArangoError, OSError) as exc:
        return f"unknown ({type(exc).__name__})"
    for name in ("vector-index", "experimental-vector-index"):
        if name in options:
            return options[name]
    return "not reported by this server"


def vector_option_check(option: Any) -> dict[str, Any]:
    """The ``--vector-index`` row: what the option's state means for the vector lane.

    Without the option the server does not know ``APPROX_NEAR_COSINE``: an ANN query
    answers error 1540 and the store falls back to the exact ``COSINE_SIMILARITY`` scan,
    which needs no option. A warning, not a failure: recall still works, only slower.
    """
    on = option is True or str(option).lower() == "true"
    if on:
        detail = "--vector-index = true: APPROX_NEAR_COSINE and the vector index are available"
    elif option is False or str(option).lower() == "false":
        detail = (
            "--vector-index = false: APPROX_NEAR_COSINE is unknown to this server (error "
            "1540), so the exact cosine scan answers every vector query"
        )
    else:
        detail = (
            f"--vector-index = {option}: if it is off, ANN queries answer error 1540 and the "
            "exact cosine scan answers every vector query"
        )
    return _check(
        "vector_index_option",
        on,
        detail,
        "start arangod with --vector-index=true (one-way; see docker-compose.yml)",
        warning=True,
    )


def reembed_check(stats: dict[str, Any]) -> dict[str, Any]:
    """A warning while tenants are left between a re-embedding's switch and the end of its
    move (``stats`` from ``admin_vector_stats``): they are in the new space already and
    correct, but answered by the exact scan and holding their staged vectors until
    ``reembed`` runs for them again (store/arango/vectors.py)."""
    moving = int(stats.get("moving") or 0)
    return _check(
        "reembed",
        moving == 0,
        "no re-embedding left unfinished"
        if moving == 0
        else f"{moving} tenant(s) stopped after the switch of a re-embedding: in the new "
        "space, vector queries on the exact scan, staged vectors still stored",
        "run `attestor-arango reembed` again for each of them (it finishes the move)",
        warning=True,
    )


def arango_doctor(config: Config) -> dict[str, Any]:
    settings = config.arango
    shown_url = without_credentials(settings.url)  # the report is shown and pasted
    report: dict[str, Any] = {"backend": "arangodb", "url": shown_url, "ok": False}
    checks: list[dict[str, Any]] = []
    report["checks"] = checks
    try:
        client = make_client(settings)
    except StoreError as exc:  # python-arango too old: nothing below could be trusted
        report["error"] = str(exc)
        checks.append(_check("driver", False, str(exc), "pip install 'python-arango>=8.3.2'"))
        return report
    try:
        db, _ = _connect(settings, client, create=False)
        version = str(db.version())
        report["server_version"] = version
        version_ok = version_tuple(version) >= MIN_SERVER_VERSION
        checks.append(
            _check(
                "server_version", version_ok, version, f"upgrade to 3.12.6+, e.g. {PINNED_IMAGE}"
            )
        )
        report["role"] = db.role()
        option = _vector_option(client, config)
        report["vector_index_option"] = option
        checks.append(vector_option_check(option))
        schema = load_schema()
        collections: dict[str, Any] = {}
        for spec in schema["collections"]:
            name = spec["name"]
            if not db.has_collection(name):
                collections[name] = "missing"
                checks.append(_check(f"collection.{name}", False, "missing", INIT_FIX))
                continue
            have = {ix.get("name"): ix for ix in db.collection(name).indexes()}  # type: ignore[union-attr]
            states = {
                ix["name"]: (
                    "missing"
                    if ix["name"] not in have
                    else "ok"
                    if index_matches(have[ix["name"]], ix)
                    else "drift"
                )
                for ix in spec["indexes"]
            }
            collections[name] = states
            bad = {k: v for k, v in states.items() if v != "ok"}
            checks.append(
                _check(
                    f"collection.{name}",
                    not bad,
                    "indexes ok" if not bad else f"indexes {bad}",
                    INIT_FIX + " (drop drifted indexes first)",
                )
            )
        report["collections"] = collections
        views: dict[str, Any] = {}
        names = {v["name"] for v in db.views()}  # type: ignore[union-attr]
        for view in schema["views"]:
            lost = missing_view_links(db, view) if view["name"] in names else ["<view>"]
            views[view["name"]] = "ok" if not lost else {"missing": lost}
            checks.append(
                _check(f"view.{view['name']}", not lost, "links ok" if not lost else str(lost),
                       INIT_FIX)
            )  # fmt: skip
        report["views"] = views
        if db.has_collection("memories"):
            state = vector_index_state(db)
            report["vector_index"] = state
            executor = Executor(Registry.load(), lambda: db)
            report["vector_stats"] = executor.run_admin("admin_vector_stats", {})[0]
            checks.append(reembed_check(report["vector_stats"]))
            ready = state.get("exists") and state.get("training_state") in (None, "ready")
            checks.append(
                _check(
                    "vector_index",
                    bool(ready),
                    str(state) if state.get("exists") else "not created yet (exact scan serves)",
                    "run `attestor-arango init` once enough vectors exist, or rebuild it",
                    warning=True,
                )
            )
        report["ok"] = all(c["ok"] or c["warning"] for c in checks)
    except Exception as exc:  # the doctor reports, it does not raise
        # a StoreError already says what failed and what to do; other types keep their name
        report["error"] = without_credentials(  # a driver's error may name the URL
            str(exc) if isinstance(exc, StoreError) else f"{type(exc).__name__}: {exc}"
        )
        checks.append(
            _check(
                "connect",
                False,
                report["error"],
                f"start ArangoDB at {shown_url} or fix ARANGO_URL/ARANGO_USER/ARANGO_PASSWORD",
            )
        )
    finally:
        client.close()
    return report
