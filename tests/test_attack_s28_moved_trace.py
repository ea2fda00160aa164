"""Session 28 attack: a purge after the recall trace was moved left the subject's queries
in the old trace files, and reported the erasure complete.

``trace.path`` is configuration: an operator moves the trace (to a log volume, to another
folder) and reopens the store. The purge erased the tenant from the trace the config named
at purge time only, so every query of the subject traced under the earlier path stayed on
disk, with ``ok`` and no warning. Each trace path a store traced recalls to is now recorded
in a list beside the store (``core/trace_paths.py``, as the export ledger and the staging
list are), and the purge erases the tenant from every path listed; another tenant's trace
files under the old path stay.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from attestor_arango import AgentContext, AgentRole
from attestor_arango.clock import ManualClock
from attestor_arango.config import Config, TraceSettings
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

ORCH = AgentRole.ORCHESTRATOR
SUBJECT = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="n1")
OTHER = AgentContext(agent_id="orch", role=ORCH, tenant="other", namespace="n1")


def _memory(folder: Path, clock: ManualClock, trace: Path | None) -> AgentMemory:
    settings = TraceSettings(enabled=trace is not None, path=str(trace) if trace else None,
                             include_content=True)  # fmt: skip
    config = Config(path=str(folder / "mem.db"), trace=settings)
    return AgentMemory(config=config, embedder=HashingEmbedder(64), clock=clock)


def _holding(folder: Path, word: str) -> list[str]:
    """The files under ``folder`` whose bytes hold ``word`` (lower-cased, as a scan would)."""
    files = sorted(f for f in folder.rglob("*") if f.is_file())
    return [str(f.relative_to(folder)) for f in files if word.encode() in f.read_bytes().lower()]


def _trace_under(folder: Path, clock: ManualClock, trace: Path, words: dict[str, str]) -> None:
    """Each tenant stores and recalls its word with tracing to ``trace``."""
    mem = _memory(folder, clock, trace)
    for ctx in (SUBJECT, OTHER):
        mem.add(f"{words[ctx.tenant]} lives in Perth", context=ctx)
        mem.recall(f"where does {words[ctx.tenant]} live", context=ctx)
    mem.close()


def test_a_purge_erases_the_subjects_queries_traced_under_an_earlier_trace_path(
    tmp_path: Path, clock: ManualClock
) -> None:
    words = {"subject": "zq" + "quokkafen" + "vxk", "other": "zq" + "wombatmire" + "vxk"}
    old, new = tmp_path / "old" / "trace.jsonl", tmp_path / "new" / "trace.jsonl"
    _trace_under(tmp_path, clock, old, words)
    assert _holding(tmp_path / "old", words["subject"])  # the premise: traced under old/
    mem = _memory(tmp_path, clock, new)  # the trace moved
    mem.recall("what is new", context=SUBJECT)

    report = mem.purge_user("subject", "GDPR erasure request #28", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert report.removed["trace_events"] > 0
    assert _holding(tmp_path, words["subject"]) == []
    mem.close()
    assert _holding(tmp_path, words["subject"]) == []
    # the other tenant's events under the old path are its own: they stay
    assert _holding(tmp_path / "old", words["other"])


def test_a_purge_with_tracing_off_erases_every_trace_path_the_store_traced_to(
    tmp_path: Path, clock: ManualClock
) -> None:
    words = {"subject": "zq" + "numbatlow" + "vxk", "other": "zq" + "bilbyhurst" + "vxk"}
    first, second = tmp_path / "a" / "trace.jsonl", tmp_path / "b" / "trace.jsonl"
    _trace_under(tmp_path, clock, first, words)
    _trace_under(tmp_path, clock, second, words)
    mem = _memory(tmp_path, clock, None)  # tracing switched off, its path dropped

    report = mem.purge_user("subject", "GDPR erasure request #29", context=SUBJECT)

    assert report.ok, report.to_dict()
    assert _holding(tmp_path, words["subject"]) == []
    assert _holding(tmp_path / "a", words["other"]) and _holding(tmp_path / "b", words["other"])
    mem.close()


def test_the_list_of_trace_paths_names_paths_only(tmp_path: Path, clock: ManualClock) -> None:
    """The list beside the store holds where traces went, never a tenant or a query."""
    words = {"subject": "zq" + "dingoveil" + "vxk", "other": "zq" + "possumark" + "vxk"}
    trace = tmp_path / "t" / "trace.jsonl"
    _trace_under(tmp_path, clock, trace, words)
    listed = tmp_path / "mem.db.traces"
    assert listed.read_text(encoding="utf-8").splitlines() == [str(trace.resolve())]
    assert Config(path=str(tmp_path / "mem.db")).store_files() >= {listed.resolve()}


def test_a_recall_whose_trace_path_cannot_be_listed_is_not_traced(
    tmp_path: Path, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A trace no purge would find is not written: when the list cannot be written (here a
    folder stands at its name), the recall answers, untraced, and the log says why."""
    word = "zq" + "quollbarrow" + "vxk"
    (tmp_path / "mem.db.traces").mkdir()
    mem = _memory(tmp_path, clock, tmp_path / "t" / "trace.jsonl")
    mem.add(f"{word} lives in Perth", context=SUBJECT)
    caplog.set_level(logging.WARNING, logger="attestor_arango.retrieval.trace")

    assert mem.recall(f"where does {word} live", context=SUBJECT).results

    assert not (tmp_path / "t").exists()  # no trace folder, no event written
    assert not [f for f in _holding(tmp_path, word) if "trace" in f]
    assert any("recall not traced" in r.getMessage() for r in caplog.records)
    mem.close()


def test_a_cli_purge_without_the_servers_trace_config_erases_the_servers_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The service traced to its own path (its config file); an operator runs the CLI's
    purge with the store's path only, no trace setting: the service's trace of the
    subject is erased all the same (before: exit 0 and the traced query left)."""
    from attestor_arango.interfaces.cli.main import main

    for name, sub in (("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config")):
        monkeypatch.setenv(name, str(tmp_path / sub))
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    word = "zq" + "servicequoll" + "vxk"
    subject = AgentContext(agent_id="orch", role=ORCH, tenant="subject", namespace="default")
    trace = TraceSettings(enabled=True, path=str(tmp_path / "logs" / "trace.jsonl"))
    config = Config(
        path=str(tmp_path / "mem.db"), trace=trace.model_copy(update={"include_content": True})
    )
    mem = AgentMemory(config=config, embedder=HashingEmbedder(384))
    mem.add("Quokka lives in Perth", context=subject)
    mem.recall(f"where does {word} live", context=subject)
    mem.close()
    assert _holding(tmp_path / "logs", word)  # the premise: the service's trace holds it

    code = main(["--json", "purge", "--tenant", "subject", "--reason", "erasure #30", "--yes",
                 "--path", str(tmp_path / "mem.db")])  # fmt: skip

    capsys.readouterr()
    assert code == 0
    assert _holding(tmp_path, word) == []
