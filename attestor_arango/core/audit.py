"""The audit log: an append-only, per-tenant hash chain.

Each entry hashes its own fields together with the previous entry's hash, so
editing, removing or reordering any entry breaks every hash after it.

What an entry may hold is enforced here, where every caller passes: ids,
actions, counts and content hashes, never content. ``scrub`` turns every string
that is not a short identifier, and every value under a key that names
free text (``CONTENT_KEYS``: reasons, session ids, names, fact text...), into
``sha256:<hex>`` of the value (so does every string under a key not known to hold
none, ``PLAIN_KEYS``: an allow-list), and bounds what an agent supplies (agent id,
target): a purge that erases the subject's rows therefore leaves none of the
subject's words in the chain, and a refused caller cannot grow the log by
sending long strings.

Digests of a memory (its row digest, its metadata's, a reason given for closing it)
are keyed by the row's salt (``hmac1:<hex>``, ``models.content_digest``): the salt is
erased with the row, so no digest the chain keeps of an erased memory can confirm a
guess of its words. Rows written before salts keep the plain digests their entries
recorded (a bare hex row digest, ``sha256:`` text digests) and still verify.

The entry's time is taken inside the write lock and never runs backwards
within a tenant's chain (concurrent writers, or a second process, cannot make
an untouched chain look reordered).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attestor_arango.clock import from_us, to_us
from attestor_arango.models import AuditEntry, Memory, content_digest, keyed_digest
from attestor_arango.scope import Scope
from attestor_arango.store.protocol import AuditStore, Store

if TYPE_CHECKING:
    from attestor_arango.context import AgentContext
    from attestor_arango.core.runtime import Runtime
    from attestor_arango.core.signing import Signer

GENESIS = "0" * 64

MAX_TOKEN = 128  # longest string kept verbatim (ids, action names, enum values)
MAX_DEPTH = 6  # nesting kept; deeper values are hashed
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@+/=-]*")
# keys whose string values are free text or identify a person: always hashed. A retention
# ``policy`` (its name in a run's summary, the policy as configured in an archive or delete
# entry) and a ``category`` are labels a tenant writes in its subject's words
# ("diagnosis_hiv"): kept verbatim they outlived the purge (session 29)
CONTENT_KEYS = frozenset(
    {
        "content",
        "text",
        "value",
        "reason",
        "query",
        "message",
        "error",
        "name",
        "names",
        "subject",
        "entity",
        "user_name",
        "session_id",
        "speaker_name",
        "statement",
        "summary",
        "flagged_for_review",
        "metadata",
        "tags",
        "policy",
        "category",
    }
)


# keys whose string values hold no user text: ids (of rows, agents, tenants, namespaces,
# entries), enum values (actions, roles, decisions), digests and chain hashes, the package's
# own names (collections, embedding spaces), times. A string under any other key is hashed
# (session 30: an allow-list; ``CONTENT_KEYS`` alone was a deny-list, and a new field
# carrying a subject's words was kept in clear unless someone remembered to add it there).
# Numbers, booleans and null are kept under every key (no text); a key's own name is kept
# when it is one of these or of ``CONTENT_KEYS``, else hashed when its dict is (a dict of
# the caller's keys). Entries already written are never scrubbed again: they verify as
# they were recorded (``tests/test_attack_s30_audit_allow_list.py``).
PLAIN_KEYS = frozenset(
    {
        # the entry's scope and actors
        "namespace",
        "parent_agent_id",
        "scope",
        "tenant",
        "role",
        "operation",
        "by",
        "at",
        # row ids and digests
        "ids",
        "memories",
        "rows",
        "row",
        "extra",
        "written_during",
        "target_id",
        "evidence_episode_id",
        "fact_digest",
        # ingest decisions: enum values
        "decisions",
        "action",
        "decided_by",
        "speaker",
        # governance: collection names, counts by collection, the import's source
        "failed_collection",
        "not_attempted",
        "counts",
        "holding",
        "removed",
        "remaining",
        "kept",
        "audit_chain",
        "quota",
        "daily_writes",
        "policies",
        "older_than",
        "source",
        "exported_at",
        "audit_last_hash",
        "head_key_id",
        # re-embedding: the embedding spaces' labels (the package's own names)
        "from",
        "to",
    }
)


def digest_text(value: str, salt: str | None = None) -> str:
    """A string's digest: proves what was said without holding it. ``hmac1:<hex>`` keyed by
    ``salt`` (the salt of the row the text is about, erased with it), else ``sha256:<hex>``."""
    raw = value.encode("utf-8", "surrogatepass")
    if salt is not None:
        return keyed_digest(salt, raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def token(value: object, salt: str | None = None) -> str | None:
    """A string kept verbatim only when it is a short identifier; else its digest."""
    if value is None:
        return None
    text = str(value)
    if len(text) <= MAX_TOKEN and _TOKEN.fullmatch(text):
        return text
    return digest_text(text, salt)


def scrub(value: Any, *, hashed: bool = False, depth: int = 0, salt: str | None = None) -> Any:
    """The JSON value an entry may hold: numbers, booleans, null, identifiers, digests
    (keyed by ``salt`` when the entry is about one salted row, ``digest_text``)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else digest_text(str(value), salt)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= MAX_DEPTH:
        return digest_text(json.dumps(value, sort_keys=True, default=str), salt)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = token(key, salt) or "null"
            known = name in PLAIN_KEYS or name in CONTENT_KEYS
            if hashed and not known:  # a key of the caller's own, in a hashed dict
                name = digest_text(str(key), salt)
            hash_it = hashed or not known or name in CONTENT_KEYS
            out[name] = scrub(item, hashed=hash_it, depth=depth + 1, salt=salt)
        return out
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [scrub(v, hashed=hashed, depth=depth + 1, salt=salt) for v in items]
    text = str(value)
    return digest_text(text, salt) if hashed else token(text, salt)


# a digest made without a key: the ``sha256:`` text digests and the bare hex row digests
# of entries written before salts (schema 8); a guessed text can be checked against them
_PLAIN_DIGEST = re.compile(r"(?:sha256:)?[0-9a-f]{64}")
# keys whose values are chain hashes, not digests of a text: an import's record of the
# source chain's last hash is computed over that chain's entries and confirms no guess
CHAIN_HASH_KEYS = frozenset({"audit_last_hash"})


# entries about the tenant, not a row, hash their free text without a key too: a
# ``reembed`` entry the labels of its embedding spaces, retention entries the policy as
# configured (``policy``, ``policies``). Neither is a row's text: not counted
TENANT_WIDE_ACTIONS = frozenset({"reembed"})
CONFIG_KEYS = frozenset({"policy", "policies"})


def row_text_digests(action: str, details: dict[str, Any]) -> int:
    """``plain_digests`` of what an entry may hold of a row's text (none in a re-embedding's
    entry, none under a retention policy's keys)."""
    if action in TENANT_WIDE_ACTIONS:
        return 0
    return plain_digests({k: v for k, v in details.items() if k not in CONFIG_KEYS})


def plain_digests(value: Any) -> int:
    """How many strings in an entry's ``details`` are unkeyed digests (``_PLAIN_DIGEST``).

    The chain cannot be rewritten, so those digests of an erased row outlive its erasure
    and confirm an exact guess of its words; a purge counts the entries that hold them and
    says so (``governance.purge``)."""
    if isinstance(value, str):
        return 1 if _PLAIN_DIGEST.fullmatch(value) else 0
    if isinstance(value, dict):
        return sum(plain_digests(v) for k, v in value.items() if k not in CHAIN_HASH_KEYS)
    if isinstance(value, list | tuple):
        return sum(plain_digests(v) for v in value)
    return 0


def _sealed(memory: Memory, doc: dict[str, Any]) -> str:
    """The digest of a row's canonical document: HMAC-SHA256 under the row's salt
    (``hmac1:<hex>``), or the plain SHA-256 hex of a row written before salts."""
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    if memory.salt is not None:
        return keyed_digest(memory.salt, blob.encode("ascii"))
    return hashlib.sha256(blob.encode("ascii")).hexdigest()


def row_digest(memory: Memory) -> str:
    """The digest of everything a memory row asserts, as the chain records it on write.

    Covers id, tenant, namespace, the content (hashed here, not read from the row),
    entity, category, tags, confidence, validity, creation time, provenance and the
    link to what it superseded; the row's closing (``t_expired``, status, successor) is
    recorded by its own entries. ``verify_audit_chain`` recomputes it for every row.
    Keyed by the row's salt (``_sealed``): once the row is erased, no guess of its fields
    can be checked against the entry.
    """
    p = memory.provenance
    doc = {
        "id": memory.id,
        "tenant": memory.tenant,
        "namespace": memory.namespace,
        "content": content_digest(memory.content, memory.salt),
        "entity": memory.entity,
        "category": memory.category,
        "tags": list(memory.tags),
        "confidence": memory.confidence,
        "valid_from": memory.us("valid_from"),
        "valid_until": memory.us("valid_until"),
        "t_created": memory.us("t_created"),
        "agent_id": p.agent_id,
        "role": p.role,
        "session_id": p.session_id,
        "source_episode_id": p.source_episode_id,
        "supersedes": memory.supersedes,
    }
    return _sealed(memory, doc)


def extra_digest(memory: Memory) -> str:
    """The digest of what a row asserts beside ``row_digest``: its metadata and the agents it
    passed through (``agent_trail``, ``parent_agent_id``), keyed like it. Recorded as
    ``extra`` by every write (entries written before it existed lack it, so ``row_digest``
    stays as chains recorded it)."""
    p = memory.provenance
    doc = {
        "metadata": memory.metadata,
        "agent_trail": list(p.agent_trail),
        "parent_agent_id": p.parent_agent_id,
    }
    return _sealed(memory, doc)


def entry_hash(fields: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of an entry's fields (without its own hash)."""
    payload = {k: v for k, v in fields.items() if k != "hash"}
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def chain_hash(entry: AuditEntry) -> str:
    """The hash a stored entry must carry: what its chain link is checked against."""
    return entry_hash(hash_fields(entry))


def hash_fields(entry: AuditEntry) -> dict[str, Any]:
    return {
        "tenant": entry.tenant,
        "seq": entry.seq,
        "id": entry.id,
        "ts": to_us(entry.ts),
        "agent_id": entry.agent_id,
        "role": entry.role,
        "action": entry.action,
        "target": entry.target,
        "details": entry.details,
        "prev_hash": entry.prev_hash,
    }


def append(
    store: Store,
    scope: Scope,
    *,
    entry_id: str,
    ts_us: int | Callable[[], int],
    agent_id: str,
    role: str,
    action: str,
    target: str | None,
    details: dict[str, Any],
    signer: Signer | None = None,
    salt: str | None = None,
) -> AuditEntry:
    """Appends one entry inside ``store.transaction()`` so the chain cannot fork.

    ``ts_us`` may be a clock function, read once the write lock is held; a time
    earlier than the chain's last entry (a writer that read its clock before
    another one committed) is raised to it, so time never runs backwards in a chain.
    With a ``signer`` the entry carries its signature over (tenant, seq, hash). ``salt``
    (the salt of the one row the entry is about) keys the digests of its texts.
    """
    with store.transaction():
        last = store.last_audit(scope)
        now = ts_us() if callable(ts_us) else ts_us
        if last is not None:
            now = max(now, to_us(last.ts))
        fields: dict[str, Any] = {
            "tenant": scope.tenant,
            "seq": 1 if last is None else last.seq + 1,
            "id": token(entry_id) or "",
            "ts": now,
            "agent_id": token(agent_id) or "",
            "role": token(role) or "",
            "action": token(action) or "",
            "target": token(target),
            "details": scrub(details, salt=salt),
            "prev_hash": GENESIS if last is None else last.hash,
        }
        digest = entry_hash(fields)
        signature = (
            None if signer is None else signer.sign_audit(scope.tenant, fields["seq"], digest)
        )
        entry = AuditEntry(**{**fields, "ts": from_us(now)}, hash=digest, signature=signature)
        store.append_audit(scope, entry)
        return entry


def audit_seq(store: AuditStore, scope: Scope) -> int:
    """Where the tenant's audit chain stands (its head's seq; 0 before its first entry)."""
    head = store.audit_head(scope)
    return 0 if head is None else head[0]


def purge_began_since(store: AuditStore, scope: Scope, began: int) -> bool:
    """Whether a purge of the tenant was running at ``began`` (``audit_seq``) or began since:
    its ``purge_attempted`` entry at or past it. A purge writes that entry before it erases
    the copies beside the store (trace files, export files), so a writer of such a copy
    that checks this after writing it either is seen by the purge or sees the purge."""
    last = store.read_audit_actions(scope, ("purge_attempted",), 1)
    return bool(last) and last[0].seq >= began


class Auditor:
    """Writes the entries of one memory's services into the caller's tenant chain.

    Built once from the ``Runtime``; services get it instead of reaching into
    ``AgentMemory``. The entry's time and id come from the runtime's clock and id source.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def record(
        self,
        ctx: AgentContext,
        action: str,
        target: str | None,
        details: dict[str, Any] | None = None,
        *,
        salt: str | None = None,
    ) -> AuditEntry:
        """Appends ``action`` on ``target`` by the context's agent; raises ``StoreError``.

        ``salt``: the salt of the memory the entry is about, when there is one; the texts
        of ``details`` are then kept as digests keyed by it (erased with the row)."""
        rt = self.runtime
        now = rt.clock.now_us()
        return append(
            rt.store,
            Scope(ctx.tenant),
            entry_id=rt.ids.new_id(now),
            ts_us=rt.clock.now_us,  # read again once the chain's write lock is held
            agent_id=ctx.agent_id,
            role=ctx.role.value,
            action=action,
            target=target,
            details={"namespace": ctx.namespace, **(details or {})},
            signer=rt.signer,
            salt=salt,
        )
