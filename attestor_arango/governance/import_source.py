"""An export checked against its own audit chain before it is imported.

An export carries the tenant's whole chain, and the chain records a digest of every row it
wrote, closed or removed (``row_check``). A row edited in the file after the export (its
content, validity, entity, ...) no longer matches what the chain recorded, and an edited
entry no longer matches its hash or its link. The import refuses such an export: restored
as it was, the edit would stand in the new tenant behind an ``import`` entry that vouches
for it.

The list's end is checked too (``check_head``): an export names its chain's head (``chain``:
entry count and last hash, ``chain_head``), signed by the store's key when it signs, so a
file cut at its newest entries, together with the rows they wrote, which agrees with itself
otherwise, is refused, and so is one whose list was dropped while it holds rows (nothing
would vouch for them), one without a head (an export written before session 27, or one whose
head was removed: the two cannot be told apart, so neither is read), and one whose signed head
does not verify. A head without a signature holds only against a cut: whoever rewrites the
file can rewrite an unsigned head too. A store restoring an export whose entries its own key
signed requires the head signed by that key, so stripping the signatures does not help.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from attestor_arango.core.audit import GENESIS, chain_hash
from attestor_arango.core.signing import (
    PREFIX_V2,
    KeyFileError,
    Signer,
    export_message,
    key_id_of,
    load_public_key,
    verify_bytes,
)
from attestor_arango.errors import ValidationError, shown
from attestor_arango.governance.row_check import RowLedger, compare_rows
from attestor_arango.models import AuditEntry, Memory

AGAIN = "Import the export as it was written"
SECTIONS = ("episodes", "entities", "relations", "quota")


def section_digests(data: Any) -> dict[str, str]:
    """``sha256:`` of each section of ``data`` no audit entry records (``SECTIONS``), over its
    JSON written in one form (sorted keys, no spaces, ASCII)."""
    out = {}
    for name in SECTIONS:
        text = json.dumps(data.get(name), sort_keys=True, separators=(",", ":"))
        out[name] = "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()
    return out


def chain_head(
    signer: Signer | None, tenant: str, audit: list[AuditEntry], document: dict[str, Any]
) -> dict[str, Any]:
    """What an export (``document``, JSON-ready) says of its audit list's end: entry count,
    last hash, the digest of each section no entry records and, when the store signs, the
    signature of ``signing.export_message`` over them."""
    head, sections = audit[-1].hash if audit else None, section_digests(document)
    message = export_message(tenant, len(audit), head, str(document["exported_at"]), sections)
    return {
        "entries": len(audit),
        "head": head,
        "sections": sections,
        "signature": None if signer is None else signer.sign_export(message),
    }


def check_head(
    data: Any, source: str, signer: Signer | None, rows: bool
) -> tuple[str | None, bool]:
    """Raises ``ValidationError`` unless the export's audit list ends where its head says,
    is not empty while it holds ``rows``, and its head verifies when signed (or must be, as
    ``signer`` signed its entries). Returns the id of the key that signed the head, if any,
    and whether ``signer``'s own key signed it. ``data``: the export as ``parse_export``
    accepted it (a dict)."""
    chain, audit = data.get("chain"), data.get("audit")
    chain = chain if isinstance(chain, dict) else {}
    entries, head = chain.get("entries"), chain.get("head")
    counted = type(entries) is int and 0 <= entries < 2**63  # a count any chain can hold
    if not counted or (head is not None and not isinstance(head, str)):
        raise ValidationError(
            "the export carries no chain head (its 'chain' field: its audit list's entry "
            "count and last hash), so a file cut short cannot be told from a whole one: it was "
            "written by a version before this one, or the field was removed. Export the "
            "tenant again with this version"
        )
    audit = audit if isinstance(audit, list) else []
    last = audit[-1].get("hash") if audit and isinstance(audit[-1], dict) else None
    if len(audit) != entries or last != head:
        raise ValidationError(
            f"the export's audit list holds {len(audit)} entries, its chain head says "
            f"{entries}{'' if len(audit) != entries else ' ending at another hash'}: it was "
            f"cut short or changed after it was exported. {AGAIN}"
        )
    if not audit and rows:
        raise ValidationError(
            "the export holds rows but no audit entry: nothing vouches for them (an export "
            f"carries every entry its tenant's chain holds). {AGAIN}"
        )
    sections = _check_sections(data, chain.get("sections"))
    message = export_message(source, entries, head, str(data.get("exported_at")), sections)
    signature, named = chain.get("signature"), data.get("signing")
    own_head = signer is not None and verify_bytes(signer.public_key, signature, message)
    if not own_head and signer is not None and _signed_by(signer, audit):  # restored where written
        raise ValidationError(
            "this store's key signed the export's entries, but its chain head carries no "
            f"signature of that key: the head or its signature was changed. {AGAIN}"
        )
    if named is None:
        return None, own_head
    pem = named.get("public_key") if isinstance(named, dict) else None
    try:
        key = load_public_key(pem) if isinstance(pem, str) else None
    except KeyFileError:
        key = None
    if key is None or key_id_of(key) != named.get("key_id"):
        raise ValidationError(
            "the export's 'signing' field does not hold the key it names, so its chain head's "
            f"signature cannot be checked. {AGAIN}"
        )
    if not verify_bytes(key, signature, message):
        raise ValidationError(
            "the export's chain head signature does not verify with the key it names: its "
            f"audit list was cut short or its head changed after it was exported. {AGAIN}"
        )
    return key_id_of(key), own_head


def check_head_of(data: Any, parsed: dict[str, Any], source: str, signer: Signer | None) -> None:
    """``check_head`` for the import of ``data`` (``parsed`` as ``parse_export`` and
    ``rekey`` left it); records the head's key in ``parsed["source"]`` and keeps only the
    signatures the head binds (``bound_signatures``)."""
    held = any(parsed[k] for k in ("memories", "episodes", "entities", "relations"))
    parsed["source"]["head_key_id"], own_head = check_head(data, source, signer, held)
    parsed["memories"] = bound_signatures(own_head, parsed["memories"])


def bound_signatures(own_head: bool, rows: list[Memory]) -> list[Memory]:
    """``rows`` with each signature made before v2 (``ed25519:``, over no tenant or
    namespace) dropped unless the export's head is signed by the store's own key
    (``own_head``, from ``check_head``): only that head binds the rows, through the chain's
    row digests, to the tenant they name; a v1 signature would verify wherever an edited
    export put its row. v2 signatures are kept."""
    if own_head:
        return rows

    def v1(m: Memory) -> bool:
        return bool(m.signature) and not str(m.signature).startswith(PREFIX_V2)

    return [m.model_copy(update={"signature": None}) if v1(m) else m for m in rows]


def _check_sections(data: Any, named: object) -> dict[str, str]:
    """Raises ``ValidationError`` unless the head names a digest of each of ``SECTIONS`` and
    each section of ``data`` matches its digest; returns the digests."""
    if not isinstance(named, dict) or not all(isinstance(named.get(n), str) for n in SECTIONS):
        raise ValidationError(
            "the export's chain head carries no digest of its episodes, entities, relations "
            "and quota (its 'chain' field's 'sections'), which no audit entry records, so an "
            "edit of them cannot be told: it was written by a version before this one, or the "
            "field was removed. Export the tenant again with this version"
        )
    try:
        held = section_digests(data)
    except (TypeError, ValueError, RecursionError):  # a value JSON cannot write back
        held = {}
    for name in SECTIONS:
        if held.get(name) != named[name]:
            raise ValidationError(
                f"the export's {name!r} section does not match the digest its chain head "
                f"names: it was changed after it was exported. {AGAIN}"
            )
    return {name: named[name] for name in SECTIONS}


def _signed_by(signer: Signer, audit: list[Any]) -> bool:
    """Whether the newest signed entry of ``audit`` verifies with ``signer``'s key."""
    for raw in reversed(audit):
        if isinstance(raw, dict) and raw.get("signature"):
            try:
                return signer.verify_audit(AuditEntry.model_validate(raw))
            except ValueError:
                return False
    return False


def check_source(audit: list[Any], memories: list[Memory], source: str) -> None:
    """Raises ``ValidationError`` when the export's rows or entries disagree with its chain;
    ``memories`` as exported (their ids; their tenant is set to ``source`` here)."""
    if not audit:  # check_head refused an empty list beside rows
        return
    problems: list[str] = []
    ledger = RowLedger()
    prev, expected = GENESIS, 1
    for raw in audit:
        try:
            entry = AuditEntry.model_validate(raw)
        except ValueError:
            problems.append("an audit entry is malformed")
            break
        if entry.seq != expected or entry.prev_hash != prev or chain_hash(entry) != entry.hash:
            problems.append(f"audit entry {shown(entry.seq)} does not match its hash or its link")
        ledger.see(entry)
        prev, expected = entry.hash, entry.seq + 1
    held = {m.id: m.model_copy(update={"tenant": source}) for m in memories}
    problems.extend(message for _, message in compare_rows(held, ledger))
    if problems:
        raise ValidationError(
            f"the export does not match its own audit chain ({len(problems)} problem(s); "
            f"first: {problems[0]}): it was changed after it was exported. {AGAIN}"
        )
