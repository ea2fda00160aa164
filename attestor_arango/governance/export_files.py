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
from attestor_arango.core.linefile import store_file, update_lines


def ledger_path(config: Config) -> Path:
    """Beside the embedded store's file (resolved: one ledger under every name of the
    store); for ArangoDB, in the user's data directory."""
    if config.backend == "embedded":
        db = config.db_path().resolve()
        return db.with_name(db.name + ".exports")
    return default_data_dir() / f"exports-{config.arango.database}.jsonl"


def _entries(lines: list[str]) -> list[dict[str, str]]:
    """The ledger's entries, from its lines."""
    out = []
    for line in lines:
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):  # a torn last line of a killed writer (or one
            continue  # nested too deeply to read): it names no complete file
        ok = isinstance(item, dict) and isinstance(item.get("tenant"), str)
        if ok and isinstance(item.get("path"), str):
            out.append({"tenant": item["tenant"], "path": item["path"]})
    return out


def _lines(entries: list[dict[str, str]]) -> list[str]:
    return [json.dumps(e, sort_keys=True) for e in entries]


def record_export(config: Config, tenant: str, path: Path) -> None:
    """Adds ``path`` (an export of ``tenant`` just written) to the ledger, under the
    ledger's lock (a purge rewriting it meanwhile keeps it); raises ``OSError`` when the
    ledger cannot be written (the caller removes the file then: an export the purge cannot
    find must not be left behind)."""
    entry = {"tenant": tenant, "path": str(path.resolve())}

    def add(lines: list[str]) -> list[str]:
        entries = _entries(lines)
        return _lines(entries if entry in entries else [*entries, entry])

    update_lines(ledger_path(config), add, store_file(config))


def _holds_export_of(path: Path, tenant: str) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):  # not an export of ours
        return False
    return isinstance(data, dict) and data.get("tenant") == tenant and "memories" in data


def erase_exports(config: Config, tenant: str) -> tuple[int, list[str]]:
    """Deletes the export files of ``tenant`` the ledger lists; returns how many were
    deleted and what could not be done (one line a file, kept in the ledger for the next
    purge). Other tenants' entries stay as they were, those recorded meanwhile too: the
    ledger's lock is held from its read to its write."""
    ledger = ledger_path(config)
    if not ledger.exists():  # nothing recorded; one recorded from now on is not lost
        return 0, []
    removed, problems = 0, []

    def erase(lines: list[str]) -> list[str]:
        nonlocal removed
        keep: list[dict[str, str]] = []
        for entry in _entries(lines):
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
        return _lines(keep)

    try:
        update_lines(ledger, erase, store_file(config))
    except OSError as exc:
        problems.append(f"{ledger}: {exc}")
    return removed, problems
