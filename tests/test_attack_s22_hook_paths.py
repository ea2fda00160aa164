"""Hooks with long or odd paths: a file path of up to 4096 characters is noted (one current
note per file still), a longer one or one holding a control character is refused with a
message naming the event's field, and a transcript path that cannot be read is a clear
error, never a traceback. Nothing is stored when a hook is refused."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from attack_support import stored

from attestor_arango.interfaces.cli.hooks import run_hook
from attestor_arango.memory import AgentMemory

BASE = {"session_id": "s1", "cwd": "/src/app"}


def call(mem: AgentMemory, event: str, payload: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_hook(event, mem, io.StringIO(json.dumps(payload)), out, err)
    return code, out.getvalue(), err.getvalue()


def refused(mem: AgentMemory, event: str, payload: dict, field: str) -> str:
    before = stored(mem)
    code, out, err = call(mem, event, payload)
    assert (code, out) == (1, ""), (payload, out)
    assert err.startswith(f"attestor-arango hook {event}: ") and err.count("\n") == 1
    assert field in err and "Traceback" not in err, err
    assert stored(mem) == before
    return err


def write(path: str, tool: str = "Write") -> dict:
    return {**BASE, "tool_name": tool, "tool_input": {"file_path": path}}


@pytest.mark.parametrize("length", [251, 252, 300, 1000, 4096])
def test_a_long_file_path_is_noted_once_per_file(mem: AgentMemory, length: int) -> None:
    stem = "/src/app/" + "d/" * length
    first, second = (stem[: length - 4] + end for end in ("a.py", "b.py"))
    assert len(first) == len(second) == length
    for path in (first, second, first):
        code, out, err = call(mem, "post-tool-use", write(path, "Edit"))
        assert code == 0 and json.loads(out)["captured"], err
    current = mem.current_facts(entity="app")
    assert sorted(m.metadata["file_path"] for m in current) == sorted([first, second])
    assert all(m.content.endswith(" in project app") for m in current)


def test_a_file_path_over_4096_characters_is_refused(mem: AgentMemory) -> None:
    for field in ("file_path", "notebook_path"):
        payload = {**BASE, "tool_name": "NotebookEdit", "tool_input": {field: "/a" * 2049}}
        assert "4096" in refused(mem, "post-tool-use", payload, f"tool_input.{field}")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\n", "\x7f", "\u202e", "\ud800"])
def test_paths_with_control_characters_are_refused_naming_the_field(
    mem: AgentMemory, char: str
) -> None:
    refused(mem, "post-tool-use", write(f"/src/app/a{char}b.py"), "tool_input.file_path")
    for event in ("session-start", "post-tool-use", "stop"):
        refused(mem, event, {**write("a.py"), "cwd": f"/src/a{char}pp"}, "cwd")
        refused(mem, event, {**BASE, "transcript_path": f"/tmp/t{char}.jsonl"}, "transcript_path")


def test_long_cwd_and_project_names(mem: AgentMemory) -> None:
    for event in ("session-start", "post-tool-use", "stop"):
        refused(mem, event, {**write("a.py"), "cwd": "/p" * 2049}, "cwd")
        refused(mem, event, {**write("a.py"), "cwd": "/src/" + "p" * 300}, "cwd")
    code, out, err = call(mem, "post-tool-use", {**write("a.py"), "cwd": "/src/" + "p" * 255})
    assert code == 0 and json.loads(out)["captured"], err


def test_a_transcript_path_that_cannot_be_read_is_a_clear_error(
    mem: AgentMemory, tmp_path: Path
) -> None:
    too_long = "/tmp/" + "x" * 300  # one name over the file system's 255 bytes
    refused(mem, "stop", {**BASE, "transcript_path": too_long}, "transcript_path")
    refused(mem, "stop", {**BASE, "transcript_path": "/t" * 2049}, "transcript_path")
    # a missing transcript is still no transcript: the summary is written
    code, out, _ = call(mem, "stop", {**BASE, "transcript_path": str(tmp_path / "none.jsonl")})
    assert code == 0 and json.loads(out)["summary_id"]


def test_a_useful_command_with_a_long_first_word_is_noted(mem: AgentMemory) -> None:
    command = ".venv/bin/" + "x" * 280 + " --flag"
    payload = {**BASE, "tool_name": "Bash", "tool_input": {"command": command}}
    code, out, err = call(mem, "post-tool-use", payload)
    assert code == 0 and json.loads(out)["captured"], err
    control = {**BASE, "tool_name": "Bash", "tool_input": {"command": "pytest \x1b[31m -q"}}
    refused(mem, "post-tool-use", control, "tool_input.command")


def test_stop_after_many_long_file_paths_still_writes_its_summary(mem: AgentMemory) -> None:
    paths = [f"/src/app/{n:03d}/" + "d/" * 2039 + "x.py" for n in range(300)]
    for path in paths:
        assert call(mem, "post-tool-use", write(path))[0] == 0
    code, out, err = call(mem, "stop", BASE)
    assert code == 0, err
    summary = mem.get(json.loads(out)["summary_id"])
    assert summary.content.startswith("Session s1 in project app: 300 files changed")
    assert len(summary.content) <= mem.config.max_content_chars
    assert set(summary.metadata["files"]) <= set(paths) and summary.metadata["files"]


WINDOWS = [
    "C:\\Users\\me\\billing-api",
    "C:\\Users\\me\\billing-api\\",
    "\\\\srv\\share\\billing-api",
]


@pytest.mark.parametrize("cwd", [*WINDOWS, "D:/work/billing-api", "/src/billing-api/"])
def test_the_project_of_a_windows_cwd_is_its_last_folder(mem: AgentMemory, cwd: str) -> None:
    code, out, err = call(mem, "post-tool-use", {**write("a.py"), "cwd": cwd})
    assert code == 0, err
    assert mem.get(json.loads(out)["memory_id"]).entity == "billing-api"
