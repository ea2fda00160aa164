"""`attestor-arango ui`: the Evidence Board for one local user, on loopback only.

It serves the same app as `attestor-arango api --no-auth` (so the board reads as the
configured default identity, read-only) and opens the browser on ``/ui``. It never
binds a non-loopback address: to share the board, run `attestor-arango api` with keys,
which serves it under ``/ui`` to each key's own tenant and namespaces.
"""

from __future__ import annotations

import argparse
import threading
import webbrowser
from typing import Any

from attestor_arango.errors import ValidationError
from attestor_arango.interfaces.cli import output as out
from attestor_arango.interfaces.cli.commands import common_options, open_memory
from attestor_arango.interfaces.cli.parsing import log_level_arg, port_arg
from attestor_arango.interfaces.cli.server import LOOPBACK, require_extra


def board_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/ui/memories"


def cmd_ui(args: argparse.Namespace) -> int:
    if args.host not in LOOPBACK:
        raise ValidationError(
            "the local board binds a loopback address only; to serve it further run "
            "`attestor-arango api --keys FILE` (the board is at /ui there, behind the keys)"
        )
    require_extra("ui", "server", ("starlette", "uvicorn", "jinja2"))
    import uvicorn

    from attestor_arango.interfaces.api.app import create_app
    from attestor_arango.interfaces.api.logs import configure

    configure("text", args.log_level)
    # no key: the configured identity, read-only, so the API beside the board (same port,
    # reachable by every program on the machine) cannot write, forget or purge either
    app = create_app(open_memory(args, read_only=True), None, close_on_shutdown=True)
    url = board_url(args.host, args.port)
    # the package's access line (path and status) replaces uvicorn's, which prints the
    # query string: the board's pages carry the words looked up there
    config = uvicorn.Config(
        app, host=args.host, port=args.port, log_level=args.log_level, access_log=False
    )
    server = uvicorn.Server(config)
    if not args.no_browser:
        opener = threading.Thread(target=_open_when_up, args=(server, url), daemon=True)
        opener.start()
    print(f"Evidence Board (read-only, single user) at {url}", flush=True)
    server.run()
    return out.EXIT_OK


def _open_when_up(server: Any, url: str) -> None:
    for _ in range(200):
        if server.started:
            webbrowser.open(url)
            return
        threading.Event().wait(0.05)


def register(sub: Any) -> None:
    p = sub.add_parser(
        "ui",
        parents=[common_options()],
        help="open the read-only Evidence Board for a local single user (loopback)",
    )
    p.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    p.add_argument("--port", type=port_arg, default=8765, help="port (default 8765)")
    p.add_argument("--no-browser", action="store_true", help="only print the URL")
    p.add_argument("--log-level", type=log_level_arg, default="warning", help="uvicorn log level")
    p.set_defaults(func=cmd_ui)
