"""Attack battery: files a purge reads that hold JSON nested 100,000 deep.

After deleting the tenant's rows a purge reads files beside the store: the export ledger
(``<db>.exports``), each export file it names (to check it is still the tenant's export
before deleting it: the user may have put something else there), and the trace file (one
event a line). A line or a file nested too deeply for the JSON reader raised a bare
``RecursionError`` out of ``purge_user``, after the rows were gone and before the
outcome entry was written: the CLI crashed and the chain ended in the attempt. Such JSON
is now read as what is not the reader's: the file is kept (not the tenant's export), the
line skipped (a trace line no reader can attribute is reported, as any such line), and
the purge finishes, deleting the tenant's real export file and traces.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.reports import PurgeReport

SUBJECT = AgentContext(agent_id="orch", role=AgentRole.ORCHESTRATOR, tenant="subject",
                       namespace="n1")  # fmt: skip
DEEP = b"[" * 100_000 + b"]" * 100_000


def _word(name: str) -> str:
    return "zq" + "".join(reversed(name)) + "vxk"  # built at run time: no constant holds it


def _exported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
              names: list[str], word: str) -> tuple[Path, list[Path]]:  # fmt: skip
    """A store whose subject the CLI exported to each of ``names`` (recorded in the ledger)."""
    from attestor_arango.interfaces.cli.main import main

    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    db = tmp_path / "mem.db"
    outs = [tmp_path / name for name in names]
    added = ["--json", "add", f"{word} drinks wine", "--tenant", "subject", "--path", str(db)]
    assert main(added) == 0
    for out in outs:
        args = ["--json", "export", "--tenant", "subject", "--output", str(out), "--path", str(db)]
        assert main(args) == 0
        assert word.encode() in out.read_bytes()  # the premise
    capsys.readouterr()
    return db, outs


def _purge(db: Path, trace: Path | None = None) -> PurgeReport:
    """The purge run to its end: its outcome entry written, the chain whole."""
    settings = TraceSettings(enabled=trace is not None, path=str(trace) if trace else None)
    config = Config(path=str(db), trace=settings)
    with AgentMemory(config=config, embedder=HashingEmbedder(64)) as mem:
        report = mem.purge_user("subject", "erasure #41", context=SUBJECT)
        assert report.outcome_audit_seq is not None
        assert mem.verify_audit_chain(context=SUBJECT).ok
    return report


def test_an_export_file_replaced_by_deep_json_is_kept_and_the_purge_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    word = _word("gallowmere")
    db, (replaced, real) = _exported(tmp_path, monkeypatch, capsys, ["r.json", "s.json"], word)
    replaced.write_bytes(DEEP)

    report = _purge(db)
    assert report.ok, (report.error, report.remaining)

    assert replaced.read_bytes() == DEEP  # not the tenant's export: the user's own file
    assert not real.exists()


def test_a_deep_line_in_the_export_ledger_is_skipped_and_the_purge_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    word = _word("hollowmarsh")
    db, (real,) = _exported(tmp_path, monkeypatch, capsys, ["s.json"], word)
    ledger = db.with_name(db.name + ".exports")
    assert ledger.is_file()  # the premise: the CLI recorded the export
    with ledger.open("ab") as fh:
        fh.write(DEEP + b"\n")

    report = _purge(db)
    assert report.ok, (report.error, report.remaining)

    assert not real.exists()


def test_a_deep_line_in_the_shared_trace_file_is_skipped_and_the_purge_finishes(
    tmp_path: Path,
) -> None:
    """The shared trace file of earlier versions is rewritten without the tenant's events,
        each line read for its tenant: a deep line is nobody's, stays, and is reported as a line
    that may hold the subject's words (as any line no reader can attribute)."""
    word = _word("ironmoss")
    trace = tmp_path / "trace.jsonl"
    theirs = json.dumps({"tenant": "subject", "step": "start", "query": f"where is {word}"})
    ours = json.dumps({"tenant": "other", "step": "start", "query": "where is Bob"})
    trace.write_bytes(f"{theirs}\n".encode() + DEEP + f"\n{ours}\n".encode())
    with AgentMemory(tmp_path / "mem.db", embedder=HashingEmbedder(64)) as mem:
        mem.add(f"{word} lives in Paris", context=SUBJECT)

    report = _purge(tmp_path / "mem.db", trace)

    assert trace.read_bytes() == DEEP + f"\n{ours}\n".encode()
    # a line no reader can attribute may hold the subject's words: said, not hidden
    assert not report.ok and "name no tenant" in str(report.error)


def test_a_deep_line_naming_a_recall_does_not_break_its_lookup(tmp_path: Path) -> None:
    """``recall_trace`` reads the lines naming the recall id: one nested too deeply is
    skipped as a torn line is, and the recorded recall is still returned."""
    trace = tmp_path / "trace.jsonl"
    settings = TraceSettings(enabled=True, path=str(trace))
    config = Config(path=str(tmp_path / "mem.db"), trace=settings)
    with AgentMemory(config=config, embedder=HashingEmbedder(64)) as mem:
        mem.add("Ann lives in Paris", context=SUBJECT)
        recall_id = mem.recall("where does Ann live", context=SUBJECT).recall_id
        assert recall_id is not None
        files = [f for f in tmp_path.rglob("*.jsonl") if recall_id.encode() in f.read_bytes()]
        assert files  # the premise: the events are in the tenant's file
        with files[0].open("ab") as fh:
            fh.write(f'{{"recall_id": "{recall_id}", "x": '.encode() + DEEP + b"}\n")
        assert mem.recall_trace(recall_id, context=SUBJECT).recall_id == recall_id
