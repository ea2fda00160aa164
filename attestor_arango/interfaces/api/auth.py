"""API keys -> AgentContext. A request can narrow what its key grants, never widen it.

Keys are stored as SHA-256 hex digests only (``hash_key``); the plaintext key is
shown once when it is made and never written anywhere by this package. Each key
names one tenant, the roles and agent ids it may act as, optionally the
namespaces it may touch, and budgets. Request headers pick among those; any
header asking for more than the key grants is refused with 403.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.clock import Clock, SystemClock, iso, to_us
from attestor_arango.config import API_KEYS_ENV, api_keys_setting, read_document
from attestor_arango.context import (
    ANY_AGENT,
    DEFAULT_TOKEN_BUDGET,
    AgentContext,
    AgentRole,
    Usage,
)
from attestor_arango.errors import AccessDenied, QuotaExceededError, ValidationError
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.api.errors import AuthenticationError
from attestor_arango.jsontext import load_json
from attestor_arango.scope import check_name, chosen_namespace
from attestor_arango.validation import flag_from_text, int_from_text, model_problems

ANY = ANY_AGENT
KEYS_ENV = API_KEYS_ENV
DEFAULT_MAX_AGENTS = 256


def hash_key(key: str) -> str:
    """The digest kept in configuration instead of the key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random key (256 bits), prefixed so it is recognisable in logs and scanners."""
    return "atk_" + secrets.token_urlsafe(32)


class ApiKey(BaseModel):
    """One key's grant."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    tenant: str
    roles: tuple[AgentRole, ...] = Field(min_length=1)
    agent_ids: tuple[str, ...] = Field(min_length=1)
    namespaces: tuple[str, ...] | None = None  # None: any namespace of the tenant
    read_only: bool = False
    token_budget: int = Field(default=DEFAULT_TOKEN_BUDGET, gt=0)
    max_writes_per_agent: int | None = Field(default=None, ge=0)
    # distinct agent ids a key with a write limit may act as while the server runs: the
    # limit is per agent, so a wildcard key ("*") could otherwise invent a fresh agent
    # (and a fresh counter, held in memory) for every write
    max_agents: int = Field(default=DEFAULT_MAX_AGENTS, ge=1)
    # when the key stops working (ISO-8601 with a zone); None: until removed from the ring
    expires_at: AwareDatetime | None = None

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, value: str) -> str:
        return check_name(value, "tenant")

    @field_validator("namespaces")
    @classmethod
    def _namespaces(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None:
            for ns in value:
                check_name(ns, "namespace")
        return value


class KeyRing:
    """Known keys by digest, plus the live contexts built from them.

    Each request gets a fresh (frozen) context, but every context of one (key,
    agent) shares one ``Usage`` (the key told by its digest, unique in the ring): the
    key's ``max_writes_per_agent`` is a ceiling that counts across requests whatever
    session, budget, namespace or trail the headers name, as it does for an in-process
    caller. A key with such a limit acts as at most ``max_agents`` distinct agents (the
    counters are never evicted: forgetting one would hand its agent a fresh limit), so a
    wildcard key writes at most ``max_agents * max_writes_per_agent`` times and the table
    holds at most ``max_agents`` counters per key.
    """

    def __init__(
        self, keys: list[ApiKey], source: Path | None = None, clock: Clock | None = None
    ) -> None:
        self._by_hash = _index(keys)
        self._clock = clock or SystemClock()  # what ``expires_at`` is compared with
        # a ring loaded from a file follows it: a key removed there stops working at once
        self._source = source
        self._stamp = _stamp(source)
        self._usage: dict[str, dict[str, Usage]] = {}  # key digest -> agent id -> usage
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._by_hash)

    def _follow_source(self) -> None:
        """Reloads the key file when it changed; a file that no longer parses (or is gone)
        revokes every key rather than keeping the old ones."""
        if self._source is None:
            return
        stamp = _stamp(self._source)
        if stamp == self._stamp:
            return
        with self._lock:
            if stamp == self._stamp:
                return
            try:
                keys = _read_key_file(self._source)
                self._by_hash = _index(keys)
            except (ValidationError, OSError):
                self._by_hash = {}
            # a removed key's counters go with it (the table stays bounded by the ring)
            self._usage = {d: u for d, u in self._usage.items() if d in self._by_hash}
            self._stamp = stamp

    def authenticate(self, presented: str | None) -> ApiKey:
        """The key ``presented`` is, as the ring holds it now (a key file is followed).

        Raises ``AuthenticationError`` (401) for no key, an unknown one or an expired one.
        """
        self._follow_source()
        if not presented:
            raise AuthenticationError(
                "no API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"
            )
        digest = hash_key(presented)
        for known, key in self._by_hash.items():
            if secrets.compare_digest(known, digest):
                return self._unexpired(key)
        raise AuthenticationError("unknown API key; ask the operator for a valid one")

    def _unexpired(self, key: ApiKey) -> ApiKey:
        """``key``, unless its ``expires_at`` has come (``AuthenticationError``, 401)."""
        if key.expires_at is not None and self._clock.now_us() >= to_us(key.expires_at):
            raise AuthenticationError(
                f"API key {key.id!r} expired at {iso(to_us(key.expires_at))}; "
                "ask the operator for a new one"
            )
        return key

    def context(self, key: ApiKey, headers: Mapping[str, str]) -> AgentContext:
        """The caller's context: the key's grant, narrowed by request headers."""
        refuse_repeated(headers)
        headers = _as_utf8(headers)
        tenant = headers.get(spec.H_TENANT) or key.tenant
        if tenant != key.tenant:
            raise AccessDenied(
                f"this key is for tenant {key.tenant!r}; it cannot act on tenant {tenant!r}",
                tenant=tenant,
            )
        role = AgentRole.parse(headers.get(spec.H_ROLE) or key.roles[0])
        if role not in key.roles:
            raise AccessDenied(
                f"this key does not grant role {role.value!r}; "
                f"allowed: {', '.join(r.value for r in key.roles)}",
                role=role.value,
            )
        # one agent, one name: " bot" and "bot " are bot, so padding cannot mint a fresh
        # write counter (max_writes_per_agent) or a second name in the audit chain
        named = headers.get(spec.H_AGENT)
        agent_id = named.strip() if named else key.agent_ids[0]
        if not agent_id:
            raise ValidationError(f"{spec.H_AGENT} is blank; send an agent id or omit it")
        trail = tuple(a for a in (headers.get(spec.H_TRAIL) or "").split(",") if a.strip())
        for name, header in ((agent_id, spec.H_AGENT), *((a, spec.H_TRAIL) for a in trail)):
            if name.strip() == ANY:  # "any agent" in a key file, no agent's name
                raise ValidationError(f"send an agent id in {header}; '*' is not an agent id")
        for name in (agent_id, *trail):
            if ANY not in key.agent_ids and name.strip() not in key.agent_ids:
                raise AccessDenied(
                    f"this key may not act as agent {name.strip()!r}", agent_id=name.strip()
                )
        namespace = chosen_namespace(
            headers.get(spec.H_NAMESPACE), key.namespaces[0] if key.namespaces else "inbox"
        )
        if key.namespaces is not None and namespace not in key.namespaces:
            raise AccessDenied(f"this key may not use namespace {namespace!r}")
        read_only = flag_from_text(headers.get(spec.H_READ_ONLY), spec.H_READ_ONLY) or key.read_only
        budget = key.token_budget
        if headers.get(spec.H_BUDGET):
            asked = int_from_text(headers[spec.H_BUDGET], spec.H_BUDGET)
            if asked <= 0:
                raise ValidationError(f"{spec.H_BUDGET} must be a positive number of tokens")
            budget = min(budget, asked)
        session = headers.get(spec.H_SESSION) or None
        usage = Usage()  # nothing to count across requests without a write limit
        if key.max_writes_per_agent is not None:
            usage = self._agent_usage(key, agent_id)
        return AgentContext(
            agent_id=agent_id,
            role=role,
            tenant=tenant,
            namespace=namespace,
            session_id=session,
            parent_agent_id=trail[-1].strip() if trail else None,
            agent_trail=tuple(a.strip() for a in trail),
            token_budget=budget,
            max_writes_per_agent=key.max_writes_per_agent,
            read_only=read_only,
            usage=usage,
        )

    def _agent_usage(self, key: ApiKey, agent_id: str) -> Usage:
        """The one ``Usage`` of (key, agent); ``QuotaExceededError`` (429) when the key
        already counts ``max_agents`` other agents (a new agent id would dodge the limit)."""
        with self._lock:
            # by digest, not ``key.id``: ids are labels an operator may repeat (one
            # "bot-key" per tenant), and two tenants' agents must not share a counter
            agents = self._usage.setdefault(key.sha256, {})
            usage = agents.get(agent_id)
            if usage is None:
                if len(agents) >= key.max_agents:
                    raise QuotaExceededError(
                        f"API key {key.id!r} has already acted as {key.max_agents} agents, "
                        "each with its own write limit; reuse one of those agent ids or ask "
                        "the operator to raise the key's max_agents",
                        limit=key.max_agents,
                    )
                usage = agents[agent_id] = Usage()
            return usage


NARROWING = (spec.H_TENANT, spec.H_ROLE, spec.H_AGENT, spec.H_NAMESPACE, spec.H_SESSION,
             spec.H_READ_ONLY, spec.H_TRAIL, spec.H_BUDGET)  # fmt: skip


def _as_utf8(headers: Mapping[str, str]) -> dict[str, str]:
    """The narrowing headers read as UTF-8 text. The server hands header bytes over decoded
    as Latin-1, so an agent host's UTF-8 ``José`` arrives as ``JosÃ©``: re-read, it is the
    name the key file and every JSON body spell. Bytes that are not UTF-8 (and values
    already past Latin-1) keep the reading they came with."""
    out: dict[str, str] = {}
    for name in NARROWING:
        value = headers.get(name)
        if value is None:
            continue
        try:
            out[name] = value.encode("latin-1").decode("utf-8") if not value.isascii() else value
        except UnicodeError:
            out[name] = value
    return out


def refuse_repeated(headers: Mapping[str, str]) -> None:
    """Raises ``ValidationError`` when a header that picks who the caller acts as is sent
    twice: we read the first, a proxy or log reader in front of us may read the last
    (``X-Read-Only: false`` then ``true``), as with a JSON key given twice. ``headers``
    without ``getlist`` (a plain mapping) holds each name once already."""
    getlist = getattr(headers, "getlist", None)
    if getlist is None:
        return
    for name in NARROWING:
        count = len(getlist(name))
        if count > 1:
            raise ValidationError(f"the header {name} is given {count} times; send it once")


def parse_keys(data: Any, *, source: str) -> list[ApiKey]:
    """Keys from a loaded document: a list of key mappings or ``{"keys": [...]}``."""
    if isinstance(data, dict):
        data = data.get("keys", [])
    if not isinstance(data, list):
        raise ValidationError(f"{source}: expected a list of keys or a mapping with 'keys'")
    try:
        return [ApiKey.model_validate(item) for item in data]
    except PydanticValidationError as exc:
        raise ValidationError(f"{source}: invalid API key entry: {model_problems(exc)}") from exc


def load_keys(file: str | Path | None = None, env: Mapping[str, str] | None = None) -> KeyRing:
    """Keys from ``file`` (YAML or JSON), else ``$ATTESTOR_API_KEYS`` (a path or inline JSON)."""
    if file is None:
        raw = api_keys_setting(env)
        if not raw:
            return KeyRing([])
        if raw[0] in "[{":
            return KeyRing(parse_keys(load_json(raw, KEYS_ENV), source=KEYS_ENV))
        file = raw
    path = Path(file).expanduser()
    return KeyRing(_read_key_file(path), source=path)


def _read_key_file(path: Path) -> list[ApiKey]:
    loaded = read_document(path, "API key file", "create it or fix the path")
    return parse_keys(loaded or [], source=str(path))


def _index(keys: list[ApiKey]) -> dict[str, ApiKey]:
    by_hash: dict[str, ApiKey] = {}
    for key in keys:
        if key.sha256 in by_hash:
            raise ValidationError(f"API key {key.id!r} repeats the digest of another key")
        by_hash[key.sha256] = key
    return by_hash


def _stamp(path: Path | None) -> tuple[int, int, int] | None:
    """What changes when the key file is rewritten (mtime, size, inode)."""
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return (0, 0, 0)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def authorize(route: spec.Route, key: ApiKey, ctx: AgentContext, kwargs: Mapping[str, Any]) -> None:
    """Arguments that would reach past the key: another tenant, or outside its namespaces.

    AgentMemory checks roles; this checks what only the key knows. A key limited to
    some namespaces cannot run tenant-wide operations (export, purge, audit...), which
    would read or change every namespace of the tenant.
    """
    for arg in route.tenant_args:
        if kwargs.get(arg) not in (None, ctx.tenant):
            raise AccessDenied(
                f"this key is for tenant {ctx.tenant!r}; it cannot act on {arg} {kwargs[arg]!r}",
            )
    if key.namespaces is None:
        return
    if route.op in spec.TENANT_WIDE:
        raise AccessDenied(
            f"{route.op} covers the whole tenant, and this key is limited to namespaces "
            f"{list(key.namespaces)}; use a key without a namespace limit",
        )
    named = kwargs.get("namespace")
    if named is not None and named not in key.namespaces:
        raise AccessDenied(f"this key may not use namespace {named!r}")
