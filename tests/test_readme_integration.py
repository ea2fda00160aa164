"""Runs every snippet of the README's "Connect agents" section as a user would.

Each snippet sits under a ``<!-- readme-test: NAME -->`` marker; a snippet that is
renamed, dropped or broken fails here. Servers bind free loopback ports (the one
change made to a snippet) and HOME points into a temporary directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from interface_support import ROOT, cli_env, free_port, wait_healthy
from mcp import ClientSession, StdioServerParameters, stdio_client
from test_mcp_config import _http_from
from test_mcp_http import KEYS, write_keys

BIN = str(Path(sys.executable).parent)
MARK = re.compile(r"<!-- readme-test: ([\w-]+) -->\n```(\w+)\n(.*?)\n```", re.S)


def snippets() -> dict[str, tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return {name: (lang, body) for name, lang, body in MARK.findall(text)}


def user_env(home: Path) -> dict[str, str]:
    """A user's shell: this install's scripts on PATH, HOME in the test's directory."""
    env = {k: v for k, v in cli_env(home).items() if k not in ("ATTESTOR_PATH", "XDG_DATA_HOME")}
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env["HOME"] = str(home)
    return env


def test_every_marked_snippet_is_known() -> None:
    assert set(snippets()) == {
        "mcp-stdio",
        "mcp-http-cli",
        "mcp-http",
        "hooks",
        "langgraph",
        "langchain",
        "compose",
    }


def run_python(name: str, home: Path) -> str:
    _, body = snippets()[name]
    done = subprocess.run(
        [sys.executable, "-c", body],
        env=user_env(home),
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_langgraph_snippet(tmp_path: Path) -> None:
    assert run_python("langgraph", tmp_path).strip() == "['Alice lives in Lyon']"
    assert (tmp_path / ".local/share/attestor-arango").is_dir()


def test_langchain_snippet(tmp_path: Path) -> None:
    [line] = run_python("langchain", tmp_path).splitlines()
    ident, text = line.split(" ", 1)
    assert text == "Dana manages Alice" and len(ident) >= 32


async def _stdio(entry: dict[str, Any], env: dict[str, str]) -> int:
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**env, **entry["env"]}
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        assert not (await s.call_tool("memory_add", {"content": "README configs work"})).is_error
        stats = await s.call_tool("memory_stats", {})
        return int(json.loads(stats.content[0].text)["total"])  # type: ignore[union-attr]


def test_claude_stdio_entry(tmp_path: Path) -> None:
    _, body = snippets()["mcp-stdio"]
    entry = json.loads(body)["mcpServers"]["attestor-arango"]
    assert asyncio.run(_stdio(entry, user_env(tmp_path))) == 1
    assert (tmp_path / ".local/share/attestor-arango/memory.db").exists()


def test_http_commands_and_entry(tmp_path: Path) -> None:
    _, cli = snippets()["mcp-http-cli"]
    serve, show = (shlex.split(line.split("#")[0]) for line in cli.splitlines())
    env = user_env(tmp_path)
    printed = subprocess.run(show, env=env, capture_output=True, text=True, check=True)
    _, body = snippets()["mcp-http"]
    assert json.loads(printed.stdout) == json.loads(body)  # the README shows what it prints

    write_keys(tmp_path / "keys.yaml")
    port = free_port()
    serve[serve.index("--port") + 1] = str(port)
    proc = subprocess.Popen(serve, env=env, cwd=tmp_path, stderr=subprocess.PIPE)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        entry = json.loads(body)["mcpServers"]["attestor-arango"]
        entry["url"] = entry["url"].replace(":8765/", f":{port}/")
        assert "memory_add" in asyncio.run(_http_from(entry, KEYS["acme"]))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("order", [("SessionStart", "PostToolUse", "Stop", "SessionStart")])
def test_claude_code_hooks(tmp_path: Path, order: tuple[str, ...]) -> None:
    _, body = snippets()["hooks"]
    hooks = json.loads(body)["hooks"]
    env = user_env(tmp_path)
    project = tmp_path / "shop"
    project.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "Use Postgres 16"}})
        + "\n",
        encoding="utf-8",
    )
    event = {
        "session_id": "s1",
        "cwd": str(project),
        "transcript_path": str(transcript),
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / "app.py"), "content": "print(1)"},
    }
    answers = []
    for name in order:
        [group] = hooks[name]
        if "matcher" in group:
            assert re.fullmatch(group["matcher"], event["tool_name"])
        [hook] = group["hooks"]
        assert hook["type"] == "command"
        done = subprocess.run(
            hook["command"],
            shell=True,
            env=env,
            input=json.dumps(event),
            text=True,
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        answers.append(json.loads(done.stdout))
    assert "app.py" in json.dumps(answers[-1])  # the next session is told what was written


def test_compose_snippet(tmp_path: Path) -> None:
    """Line 1 runs as written; line 2 needs a Docker engine, so its compose file and
    environment are validated with `docker-compose config` instead (when installed)."""
    _, body = snippets()["compose"]
    make_keys, up = body.splitlines()
    env = user_env(tmp_path)
    subprocess.run(make_keys, shell=True, cwd=tmp_path, env=env, check=True, capture_output=True)
    from attestor_arango.interfaces.api.auth import load_keys

    ring = load_keys(tmp_path / "attestor-keys.yaml")
    assert len(ring) == 1
    assignment, command = up.split(" ", 1)
    assert command == "docker compose up -d"
    name, value = assignment.split("=", 1)
    tool = shutil.which("docker-compose")
    if tool is None:
        pytest.skip("docker-compose is not installed (test_service_image fails under CI)")
    shutil.copy(ROOT / "docker-compose.yml", tmp_path / "docker-compose.yml")
    done = subprocess.run(
        [tool, "config"], cwd=tmp_path, env={**env, name: value}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "attestor-keys.yaml" in done.stdout
