"""An export's chain rewritten to vouch for its rows as they are, as whoever edits an
unsigned store's export can do: one ``import`` entry recording every row's digest
(``row_check.import_rows``), hashed and linked as the store would, and a head that names
it. Tests use it to reach the checks behind the chain's (an edited export whose chain
was made to agree with it)."""

from __future__ import annotations

import copy
from typing import Any

from attestor_arango.core.audit import GENESIS, chain_hash
from attestor_arango.governance.import_source import section_digests
from attestor_arango.governance.row_check import import_rows
from attestor_arango.models import AuditEntry, Memory


def rechained(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a chain of one entry vouching for its rows, and a head naming its
    sections as they are, unsigned."""
    out = copy.deepcopy(data)
    tenant = out["tenant"]
    rows = [Memory.model_validate({**m, "tenant": tenant}) for m in out["memories"]]
    fields: dict[str, Any] = {
        "tenant": tenant,
        "seq": 1,
        "id": "forged-1",
        "ts": out["exported_at"],
        "agent_id": "orch",
        "role": "orchestrator",
        "action": "import",
        "target": tenant,
        "details": {"rows": import_rows(rows)},
        "prev_hash": GENESIS,
    }
    entry = AuditEntry.model_validate({**fields, "hash": ""})
    entry = entry.model_copy(update={"hash": chain_hash(entry)})
    out["audit"] = [entry.model_dump(mode="json")]
    out["chain"] = {
        "entries": 1,
        "head": entry.hash,
        "sections": section_digests(out),
        "signature": None,
    }
    out["signing"] = None
    return out
