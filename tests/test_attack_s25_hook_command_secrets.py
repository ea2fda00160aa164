"""Session 25 attack: the post-tool-use hook kept the secrets a command line carried.

The hook notes build, test and install commands run in a project (README: a short,
content-free note), as memory content and metadata; session start hands the notes to
every later session of the project as context, and every agent of the tenant can read
them. A command often carries a credential: a package index with its token in the URL
(``pip install --index-url https://user:token@host/simple``), a build argument or an
assignment named like one (``--build-arg NPM_TOKEN=...``, ``-var db_password=...``), a
flag followed by one (``--token ...``). Each was stored verbatim and recalled into every
later session. The note now keeps the command with those values replaced by ``***``
(before it is cut to 300 characters, so a cut cannot leave a secret's start behind), in
one pass over at most ``SCRUB_LIMIT`` characters of it (a first version's patterns took
25 s on a 32,000-character command of "a.a.a...").
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from attestor_arango.interfaces.cli import hooks
from attestor_arango.interfaces.cli.hooks import run_hook
from attestor_arango.memory import AgentMemory

SECRET = "s3cr3tVALUE25"
COMMANDS = {
    "token in an index URL": f"pip install -i https://deploy:{SECRET}@pypi.corp/simple lib",
    "a token as a URL's user": f"uv pip install git+https://{SECRET}@github.com/acme/lib.git",
    "a build argument": f"docker build --build-arg NPM_TOKEN={SECRET} -t app .",
    "a variable": f"terraform apply -var db_password={SECRET} -auto-approve",
    "a flag and its value": f"npm run deploy -- --api-key {SECRET}",
    "a long command cut inside the URL": "pip install "
    + "x" * 250
    + f" --extra-index-url https://user:{SECRET}@pypi.corp/simple",
}


def _post_tool_use(mem: AgentMemory, command: str) -> dict:
    payload = {
        "session_id": "s1",
        "cwd": "/src/app",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_response": {"exit_code": 0},
    }
    out, err = io.StringIO(), io.StringIO()
    code = run_hook("post-tool-use", mem, io.StringIO(json.dumps(payload)), out, err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def _session_start(mem: AgentMemory) -> str:
    out, err = io.StringIO(), io.StringIO()
    payload = {"session_id": "s2", "cwd": "/src/app"}
    code = run_hook("session-start", mem, io.StringIO(json.dumps(payload)), out, err)
    assert code == 0, err.getvalue()
    return out.getvalue()


def _rows(mem: AgentMemory) -> str:
    db = sqlite3.connect(Path(mem.store.path))  # type: ignore[attr-defined]
    try:
        return repr(db.execute("SELECT content, metadata FROM memories").fetchall())
    finally:
        db.close()


def _secret_fragments() -> list[str]:
    return [SECRET[:6], SECRET[-6:]]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_captured_command_keeps_no_secret_it_carried(mem: AgentMemory, name: str) -> None:
    answer = _post_tool_use(mem, COMMANDS[name])

    assert answer["captured"] is True, answer
    note = mem.get(answer["memory_id"])
    assert "***" in note.content and "***" in note.metadata["command"]
    held = _rows(mem) + _session_start(mem)
    for fragment in _secret_fragments():
        assert fragment not in held, (name, held)


def test_a_command_without_secrets_is_noted_as_it_ran(mem: AgentMemory) -> None:
    command = "pytest -q tests/test_token_refresh.py -k password_reset --maxfail=1"
    answer = _post_tool_use(mem, command)

    note = mem.get(answer["memory_id"])
    assert note.metadata["command"] == command
    assert note.content == f"Ran `{command}` in project app (exit 0)"


def test_the_scrubber_reads_a_bounded_part_of_a_long_command(
    mem: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command of a million characters (the event may hold 64 MB) costs the scrubber no
    more than its first ``SCRUB_LIMIT``: the note keeps 300 of them anyway."""
    seen: list[int] = []
    real = hooks.without_credentials

    def counted(text: str) -> str:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(hooks, "without_credentials", counted)
    answer = _post_tool_use(mem, "pytest " + "a" * 1_000_000 + " -k x")

    assert answer["captured"] is True
    assert seen and max(seen) <= hooks.SCRUB_LIMIT
    assert len(mem.get(answer["memory_id"]).metadata["command"]) == 300
