"""`attestor-arango mcp --print-config`: the ``mcpServers`` entry for this install.

Agent hosts (Claude Desktop's ``claude_desktop_config.json``, Claude Code's
``.mcp.json``) start an MCP server from a JSON entry. This prints the one that
starts *this* install: the absolute path of the console script (or this
interpreter with ``-m attestor_arango``), the store and identity settings in
effect now, and, for ``--transport http``, the URL with an Authorization header
that reads the key from ``${ATTESTOR_MCP_KEY}`` (Claude Code expands it), so no
key is ever written into a config file by this command.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attestor_arango.config import ENV_NAMES, SECRET_ENV, environment
from attestor_arango.errors import without_credentials

SERVER_NAME = "attestor-arango"
KEY_VARIABLE = "ATTESTOR_MCP_KEY"  # expanded by the agent host, never read by this package
# Settings carried into the entry's env: the variables the package reads (config.py
# names them all), secrets (keys, passwords, key paths) never.
_CARRIED = tuple(name for name in ENV_NAMES if name not in SECRET_ENV)
_FLAGS = {
    "path": "ATTESTOR_PATH",
    "agent_id": "ATTESTOR_AGENT_ID",
    "role": "ATTESTOR_ROLE",
    "tenant": "ATTESTOR_TENANT",
    "namespace": "ATTESTOR_NAMESPACE",
}


def launcher() -> tuple[str, list[str]]:
    """The command that runs this install's CLI, as an absolute path."""
    beside = Path(sys.executable).with_name(SERVER_NAME)
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside), []
    found = shutil.which(SERVER_NAME)
    if found:
        return str(Path(found).resolve()), []
    return sys.executable, ["-m", "attestor_arango"]


def carried_env(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, str]:
    """Store and identity settings now in effect, without any secret (a URL's credentials
    included: the entry is pasted into config files, a project's ``.mcp.json`` among them)."""
    env = {name: without_credentials(environ[name]) for name in _CARRIED if name in environ}
    for flag, name in _FLAGS.items():
        value = getattr(args, flag, None)
        if value:
            env[name] = str(Path(value).expanduser().resolve()) if flag == "path" else value
    if "ATTESTOR_PATH" in env:
        env["ATTESTOR_PATH"] = str(Path(env["ATTESTOR_PATH"]).expanduser().resolve())
    return dict(sorted(env.items()))


def server_entry(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Any:
    """One ``mcpServers`` entry: stdio (command, args, env) or HTTP (url, headers)."""
    if getattr(args, "transport", "stdio") == "http":
        host = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
        return {
            "type": "http",
            "url": f"http://{host}:{args.port}/mcp",
            "headers": {"Authorization": f"Bearer ${{{KEY_VARIABLE}}}"},
        }
    command, prefix = launcher()
    return {
        "type": "stdio",
        "command": command,
        "args": [*prefix, "mcp"],
        "env": carried_env(args, environment(environ)),
    }


def config_document(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Any:
    return {"mcpServers": {SERVER_NAME: server_entry(args, environ)}}


def print_config(args: argparse.Namespace) -> None:
    """Print the config JSON on stdout (paste it into the host's config file)."""
    print(json.dumps(config_document(args), indent=2))
