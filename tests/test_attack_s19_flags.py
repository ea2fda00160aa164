"""Session 19 attack battery: yes/no arguments of the library read any value as a truth.

``reflect(store="false")`` stored a reflection (a non-empty string is true), and
``apply_retention(dry_run="no")`` and ``compact(dry_run="false")`` ran as dry runs although
the caller meant the opposite: a flag read from a config file or an environment variable
as text did what its text did not say. These flags now take ``True`` or ``False`` only,
as ``context.read_only`` does, and anything else is refused before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored

from attestor_arango.errors import ValidationError
from attestor_arango.memory import AgentMemory

CALLS: dict[str, Callable[[AgentMemory, Any], Any]] = {
    "reflect store": lambda mem, v: mem.reflect(min_episodes=1, store=v, context=CTX),
    "retention dry_run": lambda mem, v: mem.apply_retention([], dry_run=v, context=CTX),
    "compact dry_run": lambda mem, v: mem.compact(older_than="1d", dry_run=v, context=CTX),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("value", ["false", "no", 0, 1, None, [True]])
def test_a_flag_that_is_not_a_bool_is_refused_and_nothing_is_stored(
    tmp_path: Path, call: str, value: object
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem)
    with pytest.raises(ValidationError, match="true or false"):
        CALLS[call](mem, value)
    assert stored(mem) == before
    for flag in (True, False):  # the booleans still do what they say
        CALLS[call](mem, flag)
    mem.close()
