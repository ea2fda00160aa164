"""`attestor-arango mcp --print-config`: the printed entry starts a working server as printed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from interface_support import PYTHON, cli_env, free_port, wait_healthy
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from test_mcp_http import KEYS, write_keys

CLI = [PYTHON, "-m", "attestor_arango.interfaces.cli.main"]


def printed(home: Path, *flags: str, **env: str) -> Any:
    done = subprocess.run(
        [*CLI, "mcp", "--print-config", *flags],
        env=cli_env(home, **env),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


async def _stdio_from(entry: dict[str, Any]) -> dict[str, Any]:
    # only what the entry names, plus PATH and HOME as a host would pass
    env = {**entry["env"], "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        added = await s.call_tool("memory_add", {"content": "Configs start servers"})
        assert not added.is_error
        stats = await s.call_tool("memory_stats", {})
        data = json.loads("".join(getattr(b, "text", "") for b in stats.content))
        assert isinstance(data, dict)
        return data


def test_stdio_config_starts_the_server(tmp_path: Path) -> None:
    store = tmp_path / "elsewhere" / "mem.db"
    store.parent.mkdir()
    doc = printed(tmp_path, "--path", str(store), "--tenant", "acme", ATTESTOR_SIGNING_KEY="x")
    entry = doc["mcpServers"]["attestor-arango"]
    assert entry["type"] == "stdio" and entry["args"][-1] == "mcp"
    assert Path(entry["command"]).is_absolute()
    assert entry["env"]["ATTESTOR_PATH"] == str(store.resolve())
    assert entry["env"]["ATTESTOR_TENANT"] == "acme"
    assert "ATTESTOR_SIGNING_KEY" not in entry["env"]  # secrets never printed
    stats = asyncio.run(_stdio_from(entry))
    assert stats["total"] == 1
    assert store.exists()  # the server wrote where the config said


async def _http_from(entry: dict[str, Any], key: str) -> list[str]:
    headers = {k: v.replace("${ATTESTOR_MCP_KEY}", key) for k, v in entry["headers"].items()}
    client = create_mcp_http_client(headers=headers)
    async with (
        client,
        streamable_http_client(entry["url"], http_client=client) as (read, write),
        ClientSession(read, write) as s,
    ):
        await s.initialize()
        return [t.name for t in (await s.list_tools()).tools]


def test_http_config_reaches_the_server(tmp_path: Path) -> None:
    keys = tmp_path / "keys.yaml"
    write_keys(keys)
    port = free_port()
    doc = printed(tmp_path, "--transport", "http", "--port", str(port))
    entry = doc["mcpServers"]["attestor-arango"]
    assert entry["type"] == "http" and entry["url"] == f"http://127.0.0.1:{port}/mcp"
    cmd = [*CLI, "mcp", "--transport", "http", "--port", str(port), "--keys", str(keys)]
    proc = subprocess.Popen(cmd, env=cli_env(tmp_path), stderr=subprocess.PIPE)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        names = asyncio.run(_http_from(entry, KEYS["beta"]))
        assert "memory_recall" in names
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_entry_carries_the_settings_config_names_and_no_secret() -> None:
    """The carried names come from config.py (the one list of variables the package reads)."""
    import argparse

    from attestor_arango.config import ENV_NAMES
    from attestor_arango.interfaces.mcp_config import carried_env

    environ = {
        "ATTESTOR_TENANT": "acme",
        "ARANGO_URL": "http://db:8529",
        "ARANGO_PASSWORD": "pw",
        "ATTESTOR_API_KEYS": "/etc/keys.yaml",
        "ATTESTOR_OPENAI_API_KEY": "sk",
        "ATTESTOR_SIGNING_KEY": "/keys/sign.pem",
        "ATTESTOR_NOT_A_SETTING": "x",
    }
    carried = carried_env(argparse.Namespace(), environ)
    assert carried == {"ARANGO_URL": "http://db:8529", "ATTESTOR_TENANT": "acme"}
    assert set(carried) <= set(ENV_NAMES)
