"""Small bookkeeping files beside the store, one entry a line, replaced whole.

Re-embedding lists the staging files it was given and the CLI lists the export files it
wrote (``core/reembed.py``, ``governance/export_files.py``), so that a purge finds them.
Such a list is rewritten whole through a temporary file and an atomic rename, so a
reader never sees half of it, and it is deleted once empty.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


def replace_lines(path: Path, lines: Sequence[str]) -> None:
    """Writes ``lines`` (without their newlines) as ``path``'s whole content, atomically;
    deletes ``path`` when there are none. Raises ``OSError`` when it cannot be written."""
    if not lines:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    os.replace(tmp, path)
