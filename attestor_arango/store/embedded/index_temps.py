"""Temporary index files: their names, and removing those nobody will install.

An index file is written under a temporary name beside its final one and renamed over
it (``indexfile.write_temp`` / ``install``). A writer killed half-way leaves its
temporary file behind, and that file may hold rows an erasure removed since: the names
say whose file it is (the final name, the writer's pid), so that what is left can be
found and deleted without reading it.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path


def temp_name(path: Path) -> Path:
    """A new temporary name for ``path``: ``<name>.tmp.<pid>.<random>``, in its folder."""
    return path.with_name(f"{path.name}.tmp.{os.getpid()}.{os.urandom(4).hex()}")


def remove_temps(path: Path) -> None:
    """Deletes every temporary file written for ``path``, a running writer's too. For an
    erasure: a writer killed half-way left one holding the rows being erased, and
    ``remove_stale_temps`` runs only when some index is saved again. A running writer
    whose file goes fails to install it, as it would anyway: the rows changed."""
    for tmp in path.parent.glob(f"{glob.escape(path.name)}.tmp.*"):
        tmp.unlink(missing_ok=True)


def remove_stale_temps(folder: Path) -> None:
    """Deletes temporary files whose writer process no longer runs."""
    if not folder.is_dir():
        return
    for tmp in folder.glob("*.tmp.*.*"):
        try:
            pid = int(tmp.name.rsplit(".", 2)[-2])
        except ValueError:
            continue
        if pid != os.getpid() and not _alive(pid):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - another user's process
        return True
    return True
