"""An export checked against its own audit chain before it is imported.

An export carries the tenant's whole chain, and the chain records a digest of every row it
wrote, closed or removed (``row_check``). A row edited in the file after the export (its
content, validity, entity, ...) no longer matches what the chain recorded, and an edited
entry no longer matches its hash or its link. The import refuses such an export: restored
as it was, the edit would stand in the new tenant behind an ``import`` entry that vouches
for it. An export without its chain (``audit`` empty) has nothing to check against; the
import's entry records that it held no entry.
"""

from __future__ import annotations

from typing import Any

from attestor_arango.core.audit import GENESIS, chain_hash
from attestor_arango.errors import ValidationError
from attestor_arango.governance.row_check import RowLedger, compare_rows
from attestor_arango.models import AuditEntry, Memory


def check_source(audit: list[Any], memories: list[Memory], source: str) -> None:
    """Raises ``ValidationError`` when the export's rows or entries disagree with its chain;
    ``memories`` as exported (their ids; their tenant is set to ``source`` here)."""
    if not audit:
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
            problems.append(f"audit entry {entry.seq} does not match its hash or its link")
        ledger.see(entry)
        prev, expected = entry.hash, entry.seq + 1
    held = {m.id: m.model_copy(update={"tenant": source}) for m in memories}
    problems.extend(message for _, message in compare_rows(held, ledger))
    if problems:
        raise ValidationError(
            f"the export does not match its own audit chain ({len(problems)} problem(s); "
            f"first: {problems[0]}): it was changed after it was exported. Import the "
            "export as it was written (an export without its audit list is restored as it "
            "is, and its import entry records no source entry)"
        )
