"""New ids for an export imported into a tenant other than the one it came from.

A row's identity is (tenant, id), so a copy of tenant A's export restored as tenant B
could keep A's ids; it gets fresh ones all the same, so an id names one row wherever the
service handed it out and a copy is never mistaken for its source. Every reference
between its rows (supersession links, the episode a memory came from, the memory a
relation was derived from) follows the new ids, and each row keeps where it came from in
``metadata["imported_from"]`` (source tenant and id, and the source signature: a
signature covers the id and tenant, so the copy is unsigned and the original verifies with the
export's public key). Transaction and event times, content, agents and sessions are kept
as they were, and so is each row's salt (``Memory.salt``): the original's signed message
is made with it, and the copy holds the words themselves, so the salt tells a reader of
the copy nothing more; it is erased with the copy.
"""

from __future__ import annotations

from typing import Any

from attestor_arango.clock import to_us
from attestor_arango.errors import ValidationError, shown
from attestor_arango.ids import IdSource
from attestor_arango.models import Episode, Memory, Relation

ORIGIN_KEY = "imported_from"
TENANT_ROWS = ("memories", "episodes", "entities", "relations", "audit")


def source_tenant(data: dict[str, Any]) -> str:
    """The tenant an export is of: its ``tenant`` header, which every row and audit entry
    naming a tenant must name too. Whether the import keeps ids and signatures depends on
    it, so an export without one, or whose rows say another tenant (an edited header would
    pass tenant A's signed rows off as B's own), is refused: ``ValidationError``."""
    claimed = data.get("tenant")
    if not isinstance(claimed, str) or not claimed.strip():
        raise ValidationError(
            "the export names no tenant (its 'tenant' field); every export names the tenant "
            "it was taken from, which decides whether the import keeps its ids"
        )
    for key in TENANT_ROWS:
        rows = data.get(key)
        for row in rows if isinstance(rows, list) else ():
            if isinstance(row, dict) and "tenant" in row and row["tenant"] != claimed:
                raise ValidationError(
                    f"the export is of tenant {claimed[:64]!r} but one of its {key} belongs "
                    f"to tenant {shown(row['tenant'])}: an export holds one tenant's data, as "
                    "exported"
                )
    return claimed


def _origin(tenant: str, old_id: str, signature: str | None = None) -> dict[str, Any]:
    origin: dict[str, Any] = {"tenant": tenant, "id": old_id}
    if signature is not None:
        origin["signature"] = signature
    return origin


def rekey(parsed: dict[str, Any], source_tenant: str, ids: IdSource) -> dict[str, Any]:
    """``parsed`` (from ``parse_export``) with fresh ids and references that follow them."""
    memories: list[Memory] = parsed["memories"]
    episodes: list[Episode] = parsed["episodes"]
    relations: list[Relation] = parsed["relations"]
    new: dict[str, str] = {}
    for m in memories:
        new[m.id] = ids.new_id(m.us("t_created"))  # keeps the UUIDv7 time order
    for e in episodes:
        new[e.id] = ids.new_id(to_us(e.t_created))
    for r in relations:
        new[r.id] = ids.new_id(to_us(r.t_created))

    def follow(value: str | None) -> str | None:
        return None if value is None else new.get(value, value)

    out = dict(parsed)
    out["memories"] = [
        m.model_copy(
            update={
                "id": new[m.id],
                "supersedes": follow(m.supersedes),
                "superseded_by": follow(m.superseded_by),
                "signature": None,
                "provenance": m.provenance.model_copy(
                    update={"source_episode_id": follow(m.provenance.source_episode_id)}
                ),
                "metadata": {
                    **m.metadata,
                    ORIGIN_KEY: _origin(source_tenant, m.id, m.signature),
                },
            }
        )
        for m in memories
    ]
    out["episodes"] = [
        e.model_copy(
            update={
                "id": new[e.id],
                "metadata": {**e.metadata, ORIGIN_KEY: _origin(source_tenant, e.id)},
            }
        )
        for e in episodes
    ]
    out["relations"] = [
        r.model_copy(
            update={
                "id": new[r.id],
                "memory_id": follow(r.memory_id),
                "properties": {**r.properties, ORIGIN_KEY: _origin(source_tenant, r.id)},
            }
        )
        for r in relations
    ]
    return out
