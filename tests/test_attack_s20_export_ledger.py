"""Session 20 attack battery: one tenant's purge dropped another tenant's export from the
ledger a purge reads.

``export --output`` records each file it writes in a ledger beside the store, and a purge
of the tenant deletes the files listed (``governance.export_files``). Both read the
ledger, change it and write it back whole, with nothing held between the read and the
write: an export of tenant B recorded while tenant A's purge was between the two (another
process: the CLI beside a running service) was written over, so B's later purge no longer
knew the file and left B's words on disk. The staging list of ``reembed`` is kept the same
way. Every change of such a list now holds the list's lock from its read to its write
(``core.linefile.update_lines``).

The interleaving is made, not waited for: A's purge pauses inside its pass over the ledger
(at its check of A's file) while another thread records B's export. Nothing is timed: the
pause ends once B's record is done or, when B waits for the lock, after a while.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from attestor_arango import AgentContext
from attestor_arango.core import reembed
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.governance import export_files
from attestor_arango.memory import AgentMemory

A = AgentContext(agent_id="orch", role="orchestrator", tenant="acme")
B = AgentContext(agent_id="orch", role="orchestrator", tenant="beta")


def _export(mem: AgentMemory, ctx: AgentContext, path: Path) -> None:
    """What ``export --output`` does: the file, then its line in the ledger."""
    path.write_text(json.dumps(mem.export_user(ctx.tenant, context=ctx), default=str))
    export_files.record_export(mem.config, ctx.tenant, path)


def test_an_export_recorded_during_another_tenants_purge_is_erased_by_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    mem.add("Ann likes green tea", context=A)
    word = "Quuxplorian"
    mem.add(f"{word} likes rye", context=B)
    _export(mem, A, tmp_path / "a.json")
    theirs = tmp_path / "b.json"
    theirs.write_text(json.dumps(mem.export_user("beta", context=B), default=str))
    recorded = threading.Event()

    def record_b() -> None:
        export_files.record_export(mem.config, "beta", theirs)
        recorded.set()

    checks = export_files._holds_export_of

    def pausing(path: Path, tenant: str) -> bool:
        other = threading.Thread(target=record_b)
        other.start()
        recorded.wait(3)  # done at once when nothing holds the ledger; else B waits for it
        return checks(path, tenant)

    monkeypatch.setattr(export_files, "_holds_export_of", pausing)
    assert mem.purge_user("acme", "erasure #1", context=A).ok
    monkeypatch.setattr(export_files, "_holds_export_of", checks)
    assert recorded.wait(60)
    assert word.encode() in theirs.read_bytes()  # the premise: B's copy holds B's words

    report = mem.purge_user("beta", "erasure #2", context=B)

    assert report.ok, report.error
    assert report.removed.get("export_files") == 1
    assert not theirs.exists()
    mem.close()


def test_a_staging_file_registered_while_another_is_dropped_stays_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = AgentMemory(tmp_path / "m.db", embedder=HashingEmbedder(64))
    first, second = tmp_path / "one.staging", tmp_path / "two.staging"
    reembed.register_staging(mem.config, first)
    registered = threading.Event()

    def register_second() -> None:
        reembed.register_staging(mem.config, second)
        registered.set()

    drops = reembed.drop_staged

    def pausing(path: Path, tenant: str, ids: object = None) -> bool:
        if path != first.resolve():  # the default staging file, looked into first
            return drops(path, tenant, ids)
        other = threading.Thread(target=register_second)
        other.start()
        registered.wait(3)
        return False  # nothing of the tenant staged there, no run left: it is forgotten

    monkeypatch.setattr(reembed, "drop_staged", pausing)
    assert reembed.drop_staged_everywhere(mem.config, "acme") == []
    monkeypatch.setattr(reembed, "drop_staged", drops)
    assert registered.wait(60)

    assert reembed._registered(mem.config) == [second.resolve()]
    mem.close()
