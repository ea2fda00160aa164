"""Session 19 attack battery: the CLI's error line obeyed what the caller's input said.

Tables show control characters as ``\\x1b`` (test_attack_inputs_cli_tables.py), but the
error line printed the message as is, and messages name what was asked for: ``get``,
``forget`` and ``update`` of an id that is not found echo the id. An id taken from an
agent's output (``attestor-arango get "$ID"``) holding ``\\x1b[2J`` or ``\\x1b]0;...``
cleared the screen or retitled the window of whoever ran it (rich drops BEL, not ESC).
The error line now shows control characters as written, as a table cell does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from attack_support import CTX, seeded

from attestor_arango.errors import AttestorError
from attestor_arango.interfaces.cli import output as out

HOSTILE = "\x1b[2J\x1b]0;owned\x1b\\[red]x"


@pytest.mark.parametrize("op", ["get", "forget", "update"])
def test_an_error_naming_a_hostile_id_does_not_drive_the_terminal(
    tmp_path: Path, op: str, capsys: pytest.CaptureFixture[str]
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    call = {
        "get": lambda: mem.get(HOSTILE, context=CTX),
        "forget": lambda: mem.forget(HOSTILE, context=CTX),
        "update": lambda: mem.update(HOSTILE, content="x", context=CTX),
    }[op]
    with pytest.raises(AttestorError) as caught:
        call()
    assert "\x1b" in caught.value.message  # the premise: the message names the id
    assert out.report_error(caught.value, False) == out.EXIT_NOT_FOUND
    shown = capsys.readouterr().err
    assert "\x1b" not in shown
    assert "\\x1b[2J\\x1b]0;owned\\x1b\\[red]x" in " ".join(shown.split())  # as written
    mem.close()
