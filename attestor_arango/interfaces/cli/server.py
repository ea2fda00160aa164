"""CLI commands that run something: `doctor`, `api` (REST via uvicorn), `mcp` (stdio/HTTP)."""

from __future__ import annotations

import argparse
import errno
import gc
import importlib
import socket
import sys
from typing import Any

import yaml
from rich.console import Console
from rich.table import Table

from attestor_arango.config import load_config
from attestor_arango.errors import (
    AccessDenied,
    AttestorError,
    ConflictError,
    MissingExtraError,
    ValidationError,
)
from attestor_arango.interfaces.cli import output as out
from attestor_arango.interfaces.cli.commands import common_options, open_memory
from attestor_arango.interfaces.cli.parsing import (
    log_level_arg,
    non_negative_int,
    port_arg,
    positive_int,
    positive_seconds,
)

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MAX_BODY = 1_048_576  # bytes per HTTP request body, REST and MCP alike (ApiSettings' default)


def require_extra(command: str, extra: str, modules: tuple[str, ...]) -> None:
    """Raises MissingExtraError naming the one install command when ``modules`` are absent."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtraError(
                f"`attestor-arango {command}` needs the '{extra}' extra ({module} is not "
                f"installed); install it with: pip install 'attestor-arango[{extra}]'",
                extra=extra,
                module=module,
            ) from None


def check_address(host: str, port: int) -> None:
    """Binds ``host``:``port`` as the server will, and lets it go, before anything is opened.

    Left to uvicorn, an unresolvable host, an address not of this machine or a port in use
    opened the store, printed uvicorn's ``ERROR:`` line and exited 3 (this CLI's "not
    found"); an empty host bound every interface. Raises ``ValidationError`` for an empty,
    unresolvable or foreign host (exit 2), ``ConflictError`` for a port in use (exit 1),
    ``AccessDenied`` for a port this user may not bind (exit 4), each saying what to pass.
    """
    where = "pass 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)"
    if not host.strip():
        raise ValidationError(f"--host is empty; {where}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise ValidationError(f"--host {host!r} cannot be resolved ({exc}); {where}") from None
    for family, kind, proto, _, address in dict.fromkeys(infos):
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio binds it: IPv6 only
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise ConflictError(
                        f"port {port} on {host} is in use by another process; stop it or "
                        "pass another --port"
                    ) from None
                if exc.errno == errno.EACCES:
                    raise AccessDenied(
                        f"binding port {port} on {host} is not permitted to this user (ports "
                        "below 1024 need privileges); pass --port 1024 or above"
                    ) from None
                raise ValidationError(
                    f"--host {host!r} cannot be bound ({exc.strerror}): it is not an address "
                    f"of this machine; {where}"
                ) from None


def run_server(app: Any, **options: Any) -> None:
    """``uvicorn.run``; a server that did not start (an address taken after
    ``check_address``, a failed start-up) is an ``AttestorError``, not uvicorn's exit 3."""
    import uvicorn

    try:
        uvicorn.run(app, **options)
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        raise AttestorError(
            f"the server did not start (uvicorn exited {exc.code}; its error is above)"
        ) from None


def settle_heap() -> None:
    """Moves what start-up left on the heap out of the garbage collector's sight.

    Imports and opening the store leave ~40-55k long-lived objects; every full collection
    walks them all (40-70 ms CPU measured at 1k memories), and a server ran about two per
    200 recalls, which is where its p99 came from (benchmarks/results/p99-gc-s9-h21a.md).
    Frozen, they are never collected again, which is right for objects that live as long
    as the process. Like the BLAS limit (core/blas.py) this is process-wide, so only the
    servers the CLI starts do it; the library never does it to a host program.
    """
    gc.collect()
    gc.freeze()


def cmd_doctor(args: argparse.Namespace) -> int:
    from attestor_arango.interfaces.cli.doctor import run_doctor

    config = load_config(args.config, path=args.path)
    report = run_doctor(config)
    if out.machine(args.json):
        out.emit_json(report.to_dict())
    else:
        table = Table(title=f"attestor-arango doctor ({report.backend})")
        for column in ("check", "status", "detail", "what to do"):
            table.add_column(column, overflow="fold")
        for check in report.checks:
            status = (
                "[green]ok[/]"
                if check.ok
                else ("[yellow]warn[/]" if check.warning else "[bold red]FAIL[/]")
            )
            table.add_row(check.name, status, check.detail, check.fix or "")
        Console().print(table)
    return out.EXIT_OK if report.ok else out.EXIT_OTHER


def cmd_new_key(args: argparse.Namespace) -> int:
    from attestor_arango.interfaces.api.auth import ApiKey, hash_key, new_key

    if not args.tenant or not args.key_role:
        raise ValidationError("--new-key needs --tenant and at least one --key-role")
    plain = new_key()
    entry = ApiKey(
        id=args.key_id or f"{args.tenant}-{args.key_role[0]}",
        sha256=hash_key(plain),
        tenant=args.tenant,
        roles=tuple(args.key_role),
        agent_ids=tuple(args.key_agent or [f"{args.key_role[0]}-1"]),
    )
    record = entry.model_dump(mode="json", exclude_defaults=True)
    record["sha256"] = entry.sha256
    if args.json:
        out.emit_json({"key": plain, "entry": record})
    else:
        print(f"API key (shown once, store it now): {plain}", file=sys.stderr)
        print(yaml.safe_dump({"keys": [record]}, sort_keys=False))
    return out.EXIT_OK


def cmd_api(args: argparse.Namespace) -> int:
    if args.new_key:
        return cmd_new_key(args)
    require_extra("api", "server", ("starlette", "uvicorn"))
    from attestor_arango.interfaces.api.app import ApiSettings, create_app
    from attestor_arango.interfaces.api.auth import load_keys

    keys = load_keys(args.keys)
    if len(keys) == 0 and not args.no_auth:
        raise ValidationError(
            "no API keys: pass --keys FILE or set ATTESTOR_API_KEYS (make one with "
            "`attestor-arango api --new-key --tenant T --key-role executor`), or run a local "
            "single-user server with --no-auth",
        )
    if args.no_auth and args.host not in LOOPBACK:
        raise ValidationError("--no-auth only binds a loopback address; use keys to serve further")
    check_address(args.host, args.port)
    settings = ApiSettings(
        max_body_bytes=args.max_body,
        request_timeout_s=args.timeout,
        workers=args.workers,
        tenant_workers=args.tenant_workers,
    )
    from attestor_arango.interfaces.api.logs import configure

    configure(args.log_format, args.log_level)
    memory = open_memory(args)
    app = create_app(memory, None if args.no_auth else keys, settings, close_on_shutdown=True)
    settle_heap()
    # uvicorn stops accepting on SIGINT/SIGTERM, lets in-flight requests finish for up to
    # --grace seconds, then runs the lifespan shutdown that closes the store.
    run_server(
        app,
        host=args.host,
        port=args.port,
        timeout_graceful_shutdown=args.grace,
        log_level=args.log_level,
        limit_concurrency=args.max_connections,
        timeout_keep_alive=5,
        # the package's access line (api/logs.py, both formats) replaces uvicorn's, which
        # prints the query string: the board's pages carry a subject's words there
        access_log=False,
    )
    return out.EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        from attestor_arango.interfaces.mcp_config import print_config

        print_config(args)
        return out.EXIT_OK
    require_extra("mcp", "mcp", ("mcp",))
    if args.transport == "stdio":
        from attestor_arango.interfaces.mcp import run_stdio

        memory = open_memory(args)
        settle_heap()
        run_stdio(memory)
        return out.EXIT_OK
    require_extra("mcp --transport http", "server", ("starlette", "uvicorn"))
    from attestor_arango.interfaces.api.auth import load_keys
    from attestor_arango.interfaces.mcp_http import create_mcp_app

    keys = load_keys(args.keys)
    if len(keys) == 0 and not args.no_auth:
        raise ValidationError(
            "no API keys for MCP over HTTP: pass --keys FILE or set ATTESTOR_API_KEYS (the "
            "same keys as the REST service), or serve one local user with --no-auth",
        )
    if args.no_auth and args.host not in LOOPBACK:
        raise ValidationError("--no-auth only binds a loopback address; use keys to serve further")
    check_address(args.host, args.port)
    from attestor_arango.interfaces.api.logs import configure

    configure("text", args.log_level)
    memory = open_memory(args)
    try:
        app = create_mcp_app(
            memory, None if args.no_auth else keys, host=args.host, max_body_bytes=args.max_body
        )
        settle_heap()
        run_server(
            app,
            host=args.host,
            port=args.port,
            timeout_graceful_shutdown=args.grace,
            log_level=args.log_level,
            timeout_keep_alive=5,
            access_log=False,  # the package's access line instead (create_mcp_app), as in api
        )
    finally:
        memory.close()
    return out.EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """Attestor's ``serve <path>``: ``mcp`` over stdio on the store at PATH."""
    args.path = args.store or args.path
    args.transport, args.print_config = "stdio", False
    return cmd_mcp(args)


def register(sub: Any) -> None:
    common = common_options()

    p = sub.add_parser("doctor", parents=[common], help="check every store role and the embedder")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("api", parents=[common], help="serve the REST API (uvicorn)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind")
    p.add_argument("--port", type=port_arg, default=8080, help="TCP port")
    p.add_argument("--keys", help="API key file (YAML/JSON); default $ATTESTOR_API_KEYS")
    p.add_argument("--no-auth", action="store_true", help="serve as the default identity")
    p.add_argument("--max-body", type=positive_int, default=MAX_BODY, help="bytes per request body")
    p.add_argument("--timeout", type=positive_seconds, default=30.0, help="seconds per request")
    p.add_argument("--workers", type=positive_int, default=8, help="concurrent memory calls")
    p.add_argument(
        "--tenant-workers",
        type=positive_int,
        default=None,
        help="of which one tenant's at most (default: half the workers)",
    )
    p.add_argument(
        "--max-connections", type=positive_int, default=256, help="open connections at most"
    )
    p.add_argument("--grace", type=non_negative_int, default=10, help="graceful shutdown seconds")
    p.add_argument("--log-level", type=log_level_arg, default="info", help="uvicorn log level")
    p.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="json: one JSON line per request and log record, each with its request id",
    )
    p.add_argument("--new-key", action="store_true", help="print a new key and its entry")
    p.add_argument("--key-id", help="id of the new key (default: TENANT-ROLE)")
    p.add_argument("--key-role", action="append", help="role the new key grants (repeatable)")
    p.add_argument("--key-agent", action="append", help="agent id the new key may use")
    p.set_defaults(func=cmd_api)

    p = sub.add_parser("mcp", parents=[common], help="serve MCP over stdio or streamable HTTP")
    p.add_argument(
        "--transport", choices=["stdio", "http"], default="stdio", help="how MCP is served"
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    p.add_argument("--port", type=port_arg, default=8765, help="HTTP port (endpoint /mcp)")
    p.add_argument("--keys", help="API key file (YAML/JSON); default $ATTESTOR_API_KEYS")
    p.add_argument(
        "--no-auth", action="store_true", help="HTTP on loopback as the default identity"
    )
    p.add_argument(
        "--max-body", type=positive_int, default=MAX_BODY, help="bytes per HTTP request body"
    )
    p.add_argument("--grace", type=non_negative_int, default=10, help="graceful shutdown seconds")
    p.add_argument("--log-level", type=log_level_arg, default="warning", help="server log level")
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print the mcpServers JSON for Claude Desktop / Claude Code for this install",
    )
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser(
        "serve", parents=[common], help="MCP over stdio on the store at PATH (as `mcp --path`)"
    )
    p.add_argument("store", nargs="?", metavar="PATH", help="embedded store file or directory")
    p.set_defaults(func=cmd_serve)
