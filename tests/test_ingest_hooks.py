"""Agent-harness hooks: JSON in, JSON out, through the real AgentMemory."""

from __future__ import annotations

import io
import json
from pathlib import Path

from attestor_arango.interfaces.cli.hooks import last_exchange, run_hook
from attestor_arango.memory import AgentMemory


def call(mem: AgentMemory, event: str, payload: object) -> tuple[int, dict, str]:
    out, err = io.StringIO(), io.StringIO()
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    code = run_hook(event, mem, io.StringIO(raw), out, err)
    return code, (json.loads(out.getvalue()) if out.getvalue() else {}), err.getvalue()


def test_session_start_injects_memories_about_the_project(mem: AgentMemory) -> None:
    mem.add("The billing-api project deploys with Helm charts.", entity="billing-api")
    mem.add("Lunch was ramen.")
    code, answer, _ = call(mem, "session-start", {"session_id": "s1", "cwd": "/src/billing-api"})
    assert code == 0
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Relevant memories for billing-api")
    assert "deploys with Helm charts" in context.splitlines()[1]


def test_post_tool_use_keeps_one_current_note_per_file(mem: AgentMemory) -> None:
    base = {"session_id": "s1", "cwd": "/src/app"}
    write = {**base, "tool_name": "Write", "tool_input": {"file_path": "/src/app/x.py",
                                                          "content": "SECRET=1"}}  # fmt: skip
    edit = {**base, "tool_name": "Edit", "tool_input": {"file_path": "/src/app/x.py"}}
    first = call(mem, "post-tool-use", write)[1]
    second = call(mem, "post-tool-use", edit)[1]
    assert first["captured"] and second["captured"]
    current = mem.current_facts(entity="app")
    assert [m.content for m in current] == ["Edited /src/app/x.py in project app"]
    assert mem.get(first["memory_id"]).superseded_by == second["memory_id"]
    assert all("SECRET" not in m.content for m in mem.timeline("app"))  # no file contents
    assert current[0].provenance.session_id == "s1"


def test_post_tool_use_captures_builds_not_noise(mem: AgentMemory) -> None:
    base = {"session_id": "s1", "cwd": "/src/app", "tool_name": "Bash"}
    test_run = {**base, "tool_input": {"command": "pytest -q tests"},
                "tool_response": {"exit_code": 0}}  # fmt: skip
    assert call(mem, "post-tool-use", test_run)[1]["captured"]
    assert not call(mem, "post-tool-use", {**base, "tool_input": {"command": "ls -la"}})[1][
        "captured"
    ]
    assert not call(mem, "post-tool-use", {**base, "tool_name": "Read"})[1]["captured"]
    assert [m.content for m in mem.current_facts()] == [
        "Ran `pytest -q tests` in project app (exit 0)"
    ]


def transcript(tmp_path: Path, *lines: dict) -> str:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n", encoding="utf-8")
    return str(path)


def test_stop_writes_a_summary_and_ingests_the_last_exchange_speaker_locked(
    mem: AgentMemory, tmp_path: Path
) -> None:
    base = {"session_id": "s9", "cwd": "/src/app"}
    call(mem, "post-tool-use", {**base, "tool_name": "Write", "tool_input": {"file_path": "a.py"}})
    path = transcript(
        tmp_path,
        {"type": "user", "message": {"role": "user", "content": "Old question."}},
        {"type": "user", "message": {"role": "user", "content": "I prefer tabs over spaces."}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "You prefer tabs. Black formats code with spaces."}]}},
    )  # fmt: skip
    code, answer, _ = call(mem, "stop", {**base, "transcript_path": path})
    assert code == 0
    summary = mem.get(answer["summary_id"])
    assert summary.content.startswith("Session s9 in project app: 1 files changed (a.py)")
    assert "last request: I prefer tabs over spaces." in summary.content
    decisions = answer["ingested"]["decisions"]
    assert [(d["speaker"], d["text"]) for d in decisions] == [
        ("user", "I prefer tabs over spaces."),
        ("assistant", "Black formats code with spaces."),
    ]
    assert mem.stats().episodes == 1


def test_stop_is_quiet_when_already_active(mem: AgentMemory) -> None:
    code, answer, _ = call(mem, "stop", {"session_id": "s1", "stop_hook_active": True})
    assert code == 0 and answer["summary_id"] is None and mem.current_facts() == []


def test_bad_events_exit_1_and_store_nothing(mem: AgentMemory) -> None:
    for event, payload in (("stop", "{not json"), ("stop", "[1]"), ("explode", "{}")):
        code, answer, err = call(mem, event, payload)
        assert code == 1 and answer == {} and err.startswith(f"attestor-arango hook {event}")
    assert mem.stats().total == 0


def test_last_exchange_tolerates_missing_files(tmp_path: Path) -> None:
    assert last_exchange(str(tmp_path / "missing.jsonl")) == ("", "")
    assert last_exchange(None) == ("", "")
