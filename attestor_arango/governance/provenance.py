"""Checking stored memories against their Ed25519 signatures.

``verify_memory`` answers for one row; ``verify_all`` walks every version the
tenant holds (closed history included) and names the rows that fail, so an
investigator sees exactly which facts were altered or inserted without the key.
"""

from __future__ import annotations

from typing import Any

from attestor_arango.context import AgentContext
from attestor_arango.core.reads import resolve_id
from attestor_arango.core.runtime import Runtime
from attestor_arango.core.signing import Signer
from attestor_arango.errors import NotFoundError, SigningDisabled, ValidationError
from attestor_arango.governance.export import _all_memories
from attestor_arango.scope import Scope


def _signer(rt: Runtime) -> Signer:
    signer = getattr(rt, "signer", None)
    if signer is None:
        raise SigningDisabled(
            "provenance signing is not enabled; set signing.enabled (and signing.key_path) "
            "in the configuration to sign and verify memories"
        )
    if not isinstance(signer, Signer):
        raise ValidationError(f"the configured signer {type(signer).__name__} cannot verify")
    return signer


def verify_memory(rt: Runtime, ctx: AgentContext, memory_id: str) -> bool:
    """True when the row carries a valid signature by the configured key; False when it
    carries none, one that does not match it, or when no row of the tenant has that id (as
    Attestor's ``verify_memory``: a bool for every question about a row, so code written
    for it runs; another tenant's id answers as an absent one).

    ``memory_id`` may be short, as for ``get``: resolved by ``core.reads.resolve_id`` over
    the rows this checks (the tenant's, every namespace, closed versions too). Raises
    ``SigningDisabled`` (a ``ValidationError`` and, as Attestor's, a ``RuntimeError``) when
    signing is off, and ``ValidationError`` when a short id matches several ids.
    """
    signer = _signer(rt)
    scope = Scope(ctx.tenant)
    try:
        memory_id = resolve_id(rt, scope, memory_id)
    except NotFoundError:
        return False
    memory = rt.store.get_memory(scope, memory_id)
    return memory is not None and signer.verify(memory)


def verify_all(rt: Runtime, ctx: AgentContext) -> dict[str, Any]:
    """Every version in the tenant: which verify, which fail, which were never signed."""
    signer = _signer(rt)
    invalid: list[str] = []
    unsigned: list[str] = []
    checked = 0
    for memory in _all_memories(rt.store, Scope(ctx.tenant), rt.clock.now_us()):
        checked += 1
        if not memory.signature:
            unsigned.append(memory.id)
        elif not signer.verify(memory):
            invalid.append(memory.id)
    return {
        "tenant": ctx.tenant,
        "key_id": signer.key_id,
        "checked": checked,
        "valid": checked - len(invalid) - len(unsigned),
        "invalid": invalid,
        "unsigned": unsigned,
        "ok": not invalid and not unsigned,
    }
