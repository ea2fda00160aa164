"""The export files the service wrote, so a purge can erase them with the tenant.

``attestor-arango export --output FILE`` writes a tenant's whole export (every word of
every memory) to a file. That file is a copy the store does not hold, yet the service
wrote it: a purge of the tenant that left it would leave the subject's words on disk.
So each file written is recorded in a ledger beside the store (one JSON line: tenant and
absolute path; for ArangoDB in the user's data directory), and ``erase_exports`` (called
by ``purge_user``) deletes the tenant's files that still hold an export of that tenant
and rewrites the ledger without them. A file since replaced by something else (not an
export of the tenant) is left alone and forgotten. Exports returned over the API, or
copied elsewhere, are beyond reach: the purge's warnings count them (the chain's
``export`` entries).
"""

from __future__ import annotations

import json
from pathlib import Path

from attestor_arango.config import Config, default_data_dir
from attestor_arango.core.linefile import replace_lines


def ledger_path(config: Config) -> Path:
    """Beside the embedded store's file; for ArangoDB, in the user's data directory."""
    if config.backend == "embedded":
        db = config.db_path()
        return db.with_name(db.name + ".exports")
    return default_data_dir() / f"exports-{config.arango.database}.jsonl"


def _entries(ledger: Path) -> list[dict[str, str]]:
    try:
        text = ledger.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a torn last line of a killed writer: it names no complete file
        ok = isinstance(item, dict) and isinstance(item.get("tenant"), str)
        if ok and isinstance(item.get("path"), str):
            out.append({"tenant": item["tenant"], "path": item["path"]})
    return out


def _write(ledger: Path, entries: list[dict[str, str]]) -> None:
    replace_lines(ledger, [json.dumps(e, sort_keys=True) for e in entries])


def record_export(config: Config, tenant: str, path: Path) -> None:
    """Adds ``path`` (an export of ``tenant`` just written) to the ledger; raises
    ``OSError`` when the ledger cannot be written (the caller removes the file then: an
    export the purge cannot find must not be left behind)."""
    ledger = ledger_path(config)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    entry = {"tenant": tenant, "path": str(path.resolve())}
    entries = _entries(ledger)
    if entry not in entries:
        _write(ledger, [*entries, entry])


def _holds_export_of(path: Path, tenant: str) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and data.get("tenant") == tenant and "memories" in data


def erase_exports(config: Config, tenant: str) -> tuple[int, list[str]]:
    """Deletes the export files of ``tenant`` the ledger lists; returns how many were
    deleted and what could not be done (one line a file, kept in the ledger for the next
    purge). Other tenants' entries stay as they were."""
    ledger = ledger_path(config)
    entries = _entries(ledger)
    keep: list[dict[str, str]] = []
    removed, problems = 0, []
    for entry in entries:
        if entry["tenant"] != tenant:
            keep.append(entry)
            continue
        path = Path(entry["path"])
        if not path.is_file() or not _holds_export_of(path, tenant):
            continue  # gone, or no longer the export written: not ours to delete
        try:
            path.unlink()
            removed += 1
        except OSError as exc:
            problems.append(f"{path}: {exc}")
            keep.append(entry)
    if keep != entries:
        try:
            _write(ledger, keep)
        except OSError as exc:
            problems.append(f"{ledger}: {exc}")
    return removed, problems
