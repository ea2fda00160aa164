"""Session 18 attack battery, bad input through the Python API.

REST, MCP and the CLI check a read's ``status`` against a string schema before the library
sees it; the library is a public surface too, and a caller passing a list or a mapping as
``status`` must get the typed ``ValidationError`` the four reads give any unknown status,
never a ``TypeError`` from inside the check, and nothing stored may change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored

from attestor_arango.errors import ValidationError

READS = {
    "list": {},
    "count": {},
    "list_page": {},
    "search": {"query": "green tea"},
}


@pytest.mark.parametrize("status", [[], ["active"], {}, {"active": 1}, 1, b"active"])
@pytest.mark.parametrize("read", list(READS))
def test_a_status_that_is_no_text_is_a_validation_error_on_every_read(
    tmp_path: Path, read: str, status: Any
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match="status must be one of"):
        getattr(mem, read)(**READS[read], status=status, context=CTX)
    assert stored(mem) == before
    mem.close()
