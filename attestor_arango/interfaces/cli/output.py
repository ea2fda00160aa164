"""CLI output: rich tables for people, JSON for scripts, one exit-code table for both.

JSON when ``--json`` is given or stdout is not a terminal (a pipe or a file), so
``attestor-arango export > f.json`` writes what ``import f.json`` reads. On a terminal
tables show ids by their last ``SHORT_ID`` characters (the random part of a UUIDv7; the
first ones are its timestamp) and ``get``/``forget`` accept that short form back.

Exit codes: 0 ok, 2 usage or invalid input, 3 not found, 4 permission denied,
1 anything else (a store failure, a failed check), 141 stdout closed by its reader.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from typing import Any

from rich.console import Console
from rich.markup import escape as rich_escape
from rich.table import Table

from attestor_arango.errors import AccessDenied, AttestorError, NotFoundError, ValidationError
from attestor_arango.interfaces.api.codec import jsonable

EXIT_OK = 0
EXIT_OTHER = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3
EXIT_DENIED = 4

MEMORY_COLUMNS = ("id", "entity", "category", "content", "status", "t_created")
SHORT_ID = 8


def machine(flag: bool) -> bool:
    """JSON output: asked for, or stdout is a pipe or a file rather than a terminal."""
    return flag or not sys.stdout.isatty()


def short_id(value: Any) -> str:
    """The id as tables show it: its last SHORT_ID characters."""
    text = str(value or "")
    return text[-SHORT_ID:] if len(text) > SHORT_ID else text


def exit_code(err: BaseException) -> int:
    if isinstance(err, AccessDenied):
        return EXIT_DENIED
    if isinstance(err, NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(err, ValidationError):
        return EXIT_USAGE
    return EXIT_OTHER


def report_error(err: AttestorError, as_json: bool) -> int:
    """The error on stderr (as JSON with --json); returns the exit code."""
    if as_json:
        print(json.dumps({"error": err.to_dict()}), file=sys.stderr)
    else:
        # the message is plain text: brackets in it (pip extras, paths) are not markup, a
        # command to copy is not broken over lines, and a control character of what the
        # caller gave (an id echoed as "not found") is shown, not obeyed (``plain``)
        Console(stderr=True, soft_wrap=True).print(
            f"[bold red]error[/] ({err.code}): {plain(err.message)}"
        )
    return exit_code(err)


# DEL and the C1 controls: ``json`` writes them as they are when ``ensure_ascii`` is off, and
# a terminal reading C1 in UTF-8 (xterm) obeys U+009B as CSI, U+009D as OSC
_RAW_CONTROLS = re.compile("[\x7f-\x9f]")


def emit_json(value: Any) -> None:
    """``value`` as JSON on stdout, text other than ASCII as written; DEL and the C1
    controls (``_RAW_CONTROLS``: they can only stand inside a string) escaped as ``\\u009b``,
    the same value, so stored text cannot drive a terminal through ``--json`` either."""
    text = json.dumps(jsonable(value), indent=2, ensure_ascii=False)
    print(_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def plain(text: str) -> str:
    """``text`` as a table shows it: rich markup in it (``[red]``, ``[/bold]``) printed, not
    obeyed (a stray closing tag would raise), and control characters other than a line
    break or a tab shown as ``\\x1b``, so stored text cannot drive the terminal."""
    shown = "".join(
        c if c in "\n\t" or unicodedata.category(c) != "Cc" else f"\\x{ord(c):02x}" for c in text
    )
    return rich_escape(shown)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return plain(", ".join(str(v) for v in value))
    text = str(value)
    return plain(text if len(text) <= 80 else text[:77] + "...")


def memory_table(rows: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title, show_lines=False)
    for column in MEMORY_COLUMNS:
        table.add_column(column, overflow="fold")
    for row in rows:
        cells = [_cell(row.get(c)) for c in MEMORY_COLUMNS]
        cells[0] = plain(short_id(row.get("id")))
        cells[-1] = _cell(row.get("t_created"))[:16].replace("T", " ")
        table.add_row(*cells)
    return table


def mapping_table(data: dict[str, Any], title: str) -> Table:
    table = Table(title=title)
    table.add_column("field")
    table.add_column("value", overflow="fold")
    for key, value in data.items():
        shown = plain(json.dumps(value)) if isinstance(value, dict | list) else _cell(value)
        table.add_row(plain(str(key)), shown)
    return table


def rows_table(rows: list[dict[str, Any]], title: str) -> Table:
    columns = list(rows[0]) if rows else ["(none)"]
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in columns))
    return table


def show(value: Any, title: str, as_json: bool) -> None:
    """Print a result: JSON for scripts, otherwise the table that fits its shape."""
    data = jsonable(value)
    if as_json:
        emit_json(data)
        return
    console = Console()
    if isinstance(data, list):
        if data and isinstance(data[0], dict) and "content" in data[0]:
            console.print(memory_table(data, f"{title} ({len(data)})"))
        elif data and isinstance(data[0], dict):
            console.print(rows_table(data, f"{title} ({len(data)})"))
        else:
            console.print(plain(f"{title}: {data}"))
    elif isinstance(data, dict):
        console.print(mapping_table(data, title))
    else:
        console.print(plain(f"{title}: {data}"))


def recall_table(data: dict[str, Any]) -> Table:
    title = f"recall: {data.get('query')!r} ({data.get('tokens_used')} tokens)"
    table = Table(title=plain(title))
    for column in ("#", "score", "id", "entity", "content"):
        table.add_column(column, overflow="fold")
    for n, result in enumerate(data.get("results", []), start=1):
        memory = result["memory"]
        table.add_row(
            str(n),
            f"{result['score']:.4f}",
            plain(short_id(memory["id"])),
            _cell(memory.get("entity")),
            _cell(memory["content"]),
        )
    return table
