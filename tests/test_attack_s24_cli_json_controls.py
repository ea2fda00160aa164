"""Adversarial finding: the CLI's JSON output passed C1 control characters to the terminal.

``--json`` (or any command whose stdout is not a terminal) prints JSON with
``ensure_ascii=False``: ``json`` escapes U+0000-U+001F but writes DEL and the C1 controls
U+0080-U+009F as they are. A terminal that reads C1 controls in UTF-8 (xterm does) obeys
U+009B as CSI and U+009D as OSC, so a memory another agent wrote could recolour, retitle
or (OSC 52) set the clipboard of whoever runs ``list --json`` on a terminal; the tables
already show such characters escaped (test_attack_inputs_cli_tables.py). They are written
as ``\\u009b`` now: the same JSON value, nothing a terminal obeys.
"""

from __future__ import annotations

import json

import pytest

from attestor_arango.interfaces.cli import output as out

HOSTILE = "tea \x9b31mred\x9b0m \x9d52;c;aGVsbG8=\x9c title\x9d0;owned\x07 del\x7f é ü ☕ 日本"


def test_json_output_writes_c1_controls_escaped_and_keeps_the_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    value = [{"id": "m1", "content": HOSTILE, "metadata": {HOSTILE: [HOSTILE]}}]
    out.show(value, "list", True)
    text = capsys.readouterr().out
    assert not [c for c in text if 0x7F <= ord(c) <= 0x9F]
    assert json.loads(text) == value
    assert "é ü ☕ 日本" in text  # other text stays as written (ensure_ascii stays off)


def test_the_cli_lists_a_hostile_memory_as_json_without_raw_controls(
    tmp_path: object, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from attestor_arango.interfaces.cli.main import main

    monkeypatch.setenv("ATTESTOR_PATH", str(tmp_path) + "/m.db")  # type: ignore[operator]
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    assert main(["add", HOSTILE, "--json"]) == 0
    capsys.readouterr()
    assert main(["list", "--json"]) == 0
    text = capsys.readouterr().out
    assert not [c for c in text if 0x7F <= ord(c) <= 0x9F]
    assert [m["content"] for m in json.loads(text)] == [HOSTILE]
