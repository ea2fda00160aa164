"""Adversarial finding: the CLI's tables obeyed what stored text said.

On a terminal ``list``, ``get``, ``recall`` and ``export`` print rich tables, and rich reads
markup in a cell: a memory whose content held ``[/bold]`` stopped the command with a
``MarkupError`` traceback, ``[red]`` coloured the rest of the cell, and a terminal escape
(``\\x1b[2J`` clears the screen, ``\\x1b]0;...`` retitles the window) reached the terminal
as is. Anyone who can write a memory could break or drive the screen of whoever lists it.
A cell now shows such text as written: markup printed, control characters as ``\\x1b``.
"""

from __future__ import annotations

import pytest

from attestor_arango.interfaces.cli import output as out

HOSTILE = "a [/bold] b [red]red\x1b[2J\x1b]0;owned\x07"
ROW = {"id": "01a2-[/x]", "entity": "e\x1b[31m", "category": "c", "content": HOSTILE,
       "status": "active", "t_created": "2026-01-01T00:00:00Z"}  # fmt: skip


def _shown(capsys: pytest.CaptureFixture[str]) -> str:
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text  # nothing the terminal would obey
    return " ".join(text.split())


def test_a_memory_table_shows_markup_and_escapes_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out.show([ROW], "list", False)
    shown = _shown(capsys)
    assert "a [/bold] b" in shown and "[red]red" in shown
    assert "\\x1b[2J" in shown and "e\\x1b[31m" in shown


def test_a_mapping_and_a_scalar_show_markup_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out.show({"key[/b]": {"nested": "[/i]"}, "plain": "\x1b[5m"}, "stats", False)
    out.show("x [/y]", "count", False)
    shown = _shown(capsys)
    assert "key[/b]" in shown and '{"nested": "[/i]"}' in shown and "\\x1b[5m" in shown
    assert "count: x [/y]" in shown


def test_a_recall_table_shows_its_query_and_content_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = {"query": "[/q]", "tokens_used": 3,
            "results": [{"score": 1.0, "memory": {**ROW, "id": "x" * 36}}]}  # fmt: skip
    out.Console().print(out.recall_table(data))
    shown = _shown(capsys)
    assert "recall: '[/q]'" in shown and "a [/bold] b" in shown
