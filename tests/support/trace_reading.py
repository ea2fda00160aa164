"""Reading a recall trace as tests see it, whatever the per-tenant layout
(``attestor_arango/retrieval/trace.py``, "Layout")."""

from __future__ import annotations

from pathlib import Path

from attestor_arango.retrieval.trace_files import tenant_folder


def trace_files(path: Path) -> list[Path]:
    """Every file of the trace configured at ``path``: the shared file of earlier versions
    and its rotated files, then every tenant's files (``tenant_folder``), by name."""
    shared = sorted(path.parent.glob(f"{path.name}*"))
    tenants = tenant_folder(path)
    own = sorted(tenants.iterdir()) if tenants.is_dir() else []
    return [p for p in shared + own if p.is_file()]


def trace_bytes(path: Path) -> bytes:
    """The bytes of every file of the trace configured at ``path`` (``trace_files``)."""
    return b"".join(p.read_bytes() for p in trace_files(path))


def trace_text(path: Path) -> str:
    """``trace_bytes`` as text."""
    return trace_bytes(path).decode("utf-8")
