"""Hook event fields of the wrong JSON type are refused, on every event: exit code 1, one
line on stderr naming the field, nothing on stdout, nothing stored, no traceback."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from attack_support import stored

from attestor_arango.interfaces.cli import hooks
from attestor_arango.interfaces.cli.hooks import HANDLERS, run_hook
from attestor_arango.memory import AgentMemory

NOT_TEXT = [5, 2.5, True, [], ["a"], {}, {"a": 1}]
NOT_FLAG = [1, 0, "yes", "", [], {}, 2.5]
NOT_OBJECT = [5, "x", [1], True]
TOP = [(name, NOT_TEXT) for name in ("session_id", "cwd", "tool_name", "transcript_path")]
TOP += [("stop_hook_active", NOT_FLAG), ("tool_input", NOT_OBJECT)]
TOOL_INPUT = [(name, NOT_TEXT) for name in ("file_path", "notebook_path", "command")]


def call(mem: AgentMemory, event: str, payload: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_hook(event, mem, io.StringIO(json.dumps(payload)), out, err)
    return code, out.getvalue(), err.getvalue()


def refused(mem: AgentMemory, event: str, payload: dict, field: str) -> None:
    before = stored(mem)
    code, out, err = call(mem, event, payload)
    assert (code, out) == (1, ""), (event, payload, out)
    assert err.startswith(f"attestor-arango hook {event}: ") and err.count("\n") == 1
    assert field in err and "Traceback" not in err
    assert stored(mem) == before


def good(tmp_path: Path) -> dict:
    path = tmp_path / "t.jsonl"
    line = {"type": "user", "message": {"role": "user", "content": "I like tea."}}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return {
        "session_id": "s1",
        "cwd": "/src/app",
        "transcript_path": str(path),
        "tool_name": "Write",
        "tool_input": {"file_path": "/src/app/a.py"},
        "stop_hook_active": False,
    }


@pytest.mark.parametrize("event", sorted(HANDLERS))
def test_top_level_fields_of_the_wrong_type_are_refused(
    mem: AgentMemory, tmp_path: Path, event: str
) -> None:
    mem.add("The app project uses Postgres.", entity="app")
    base = good(tmp_path)
    for field, values in TOP:
        for value in values:
            refused(mem, event, {**base, field: value}, field)


@pytest.mark.parametrize("tool", ["Write", "Edit", "NotebookEdit", "Bash"])
def test_tool_input_fields_of_the_wrong_type_are_refused(
    mem: AgentMemory, tmp_path: Path, tool: str
) -> None:
    base = {**good(tmp_path), "tool_name": tool}
    for field, values in TOOL_INPUT:
        for value in values:
            refused(mem, "post-tool-use", {**base, "tool_input": {field: value}}, field)


def test_exit_code_of_the_wrong_type_is_refused(mem: AgentMemory, tmp_path: Path) -> None:
    base = {**good(tmp_path), "tool_name": "Bash", "tool_input": {"command": "pytest -q"}}
    for value in ["0", True, 2.5, [], {}, 10**20, -(10**20)]:
        payload = {**base, "tool_response": {"exit_code": value}}
        refused(mem, "post-tool-use", payload, "exit_code")


def test_well_typed_events_still_run(mem: AgentMemory, tmp_path: Path) -> None:
    base = good(tmp_path)
    assert call(mem, "session-start", base)[0] == 0
    code, out, _ = call(mem, "post-tool-use", base)
    assert code == 0 and json.loads(out)["captured"]
    bash = {**base, "tool_name": "Bash", "tool_input": {"command": "pytest -q"}}
    for response in ({"exit_code": 1}, {"exit_code": None}, {"stdout": "ok"}, None, "ok"):
        assert call(mem, "post-tool-use", {**bash, "tool_response": response})[0] == 0
    absent = {"tool_name": None, "tool_input": None, "session_id": None, "cwd": None}
    assert call(mem, "post-tool-use", absent)[0] == 0
    code, out, _ = call(mem, "stop", base)
    assert code == 0 and json.loads(out)["summary_id"]
    assert call(mem, "stop", {**base, "stop_hook_active": True})[0] == 0


def test_an_event_over_the_size_limit_is_refused_unread(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the limit (64M characters) made small: the old code had none and read any event
    monkeypatch.setattr(hooks, "MAX_EVENT_CHARS", 1000, raising=False)
    payload = {"session_id": "s1", "cwd": "/src/app", "tool_name": "Write"}
    payload["tool_input"] = {"file_path": "a.py", "content": "x" * 1000}
    out, err = io.StringIO(), io.StringIO()
    before = stored(mem)
    code = run_hook("post-tool-use", mem, io.StringIO(json.dumps(payload)), out, err)
    assert (code, out.getvalue()) == (1, "")
    assert "longer than 1000 characters" in err.getvalue() and stored(mem) == before


def test_an_event_with_a_utf8_byte_order_mark_is_read(mem: AgentMemory, tmp_path: Path) -> None:
    # a harness on Windows (PowerShell's UTF-8) may write one; JSON readers may ignore it
    raw = "\ufeff" + json.dumps({**good(tmp_path), "tool_name": "Write"})
    out, err = io.StringIO(), io.StringIO()
    assert run_hook("post-tool-use", mem, io.StringIO(raw), out, err) == 0, err.getvalue()
    assert json.loads(out.getvalue())["captured"]
