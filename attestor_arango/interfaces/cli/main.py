"""The `attestor-arango` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from attestor_arango.config import load_config
from attestor_arango.interfaces.cli import output as out
from attestor_arango.interfaces.cli.parsing import (
    CliParser,
    DefaultsFormatter,
    UsageError,
    add_global_options,
    finish,
    wants_json,
)

EXIT_BROKEN_PIPE = 141  # what a shell reports for a writer killed by SIGPIPE (128 + 13)


def _cmd_init(args: argparse.Namespace) -> int:
    overrides = {"backend": args.backend, "path": args.path}
    config = load_config(args.config, **overrides)
    if config.backend == "arangodb":
        from attestor_arango.store.arango import init_arango

        report = init_arango(config)
    else:
        from attestor_arango.store.embedded.store import SQLiteStore

        store = SQLiteStore(config.db_path())
        report = {
            "backend": "embedded",
            "path": str(store.path),
            "schema_version": store.schema_version,
        }
        store.close()
    out.show(report, "init", out.machine(args.json))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from attestor_arango.interfaces.cli.demo import run_demo

    if args.json:  # stdout carries the JSON alone; the guided tour is not printed
        from rich.console import Console

        out.emit_json(run_demo(args.path, console=Console(quiet=True)))
    else:
        run_demo(args.path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="attestor-arango",
        description="Shared, bi-temporal, auditable memory for teams of LLM agents. "
        "Output is a table on a terminal and JSON when stdout is a pipe or a file.",
        formatter_class=DefaultsFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    add_global_options(parser, inner=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("init", help="create the store's schema (idempotent)")
    p.add_argument(
        "--backend", choices=["embedded", "arangodb"], help="store backend (default: config's)"
    )
    p.add_argument("--path", help="embedded store file or directory (default: config's)")
    p.set_defaults(func=_cmd_init)

    p = sub.add_parser("demo", help="run the guided demo on a fresh embedded store")
    p.add_argument("--path", help="directory for the demo store (default: a new temp dir)")
    p.set_defaults(func=_cmd_demo)

    from attestor_arango.interfaces.cli import (
        commands,
        hooks,
        maintenance,
        server,
        ui,
        vector_index,
    )

    server.register(sub)
    commands.register(sub)
    hooks.register(sub)
    vector_index.register(sub)
    ui.register(sub)
    maintenance.register(sub)
    finish(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attestor-arango")
    except PackageNotFoundError:  # run from a checkout that was never installed
        from attestor_arango.version import __version__

        return __version__


def _silence_stdout() -> None:
    """The reader of stdout went away (``| head``): drop what is still buffered, quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _open_standard_streams() -> None:
    """Opens the null device on descriptors 0-2 the caller closed (``<&-``, ``>&-``).

    Python leaves ``sys.stdin``/``sys.stdout``/``sys.stderr`` None then (a command ended
    with an AttributeError traceback), and the next file opened, the store's, would get
    the lowest free descriptor: a write meant for stdout or stderr would land in it. An
    absent stdin now reads as empty, an absent stdout or stderr discards what is written.
    """
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:  # closed: put the null device there (os.open takes the lowest free)
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            mode = "r" if fd == 0 else "w"
            setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command; typed errors become the documented exit codes (see output.py).

    A command line argparse refuses exits 2 with argparse's usage and message, or with
    ``--json`` the JSON error object every other failure prints (``output.report_error``).

    A closed stdout (``attestor-arango list --json | head``) ends the command quietly with
    exit code 141, as a shell reports for any writer stopped by SIGPIPE.
    """
    from attestor_arango.errors import AttestorError

    _open_standard_streams()
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(words)
    except UsageError as err:
        if wants_json(words):
            return out.report_error(err, True)
        print(err.details["usage"], file=sys.stderr)
        print(f"{err.prog}: error: {err.reason}", file=sys.stderr)
        return out.EXIT_USAGE
    try:
        code = int(args.func(args))
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except AttestorError as err:
        return out.report_error(err, bool(getattr(args, "json", False)))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
