"""The `attestor-arango` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from attestor_arango.config import load_config


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
    print(json.dumps(report, indent=2, default=str))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from attestor_arango.interfaces.cli.demo import run_demo

    result = run_demo(args.path)
    if args.json:
        print(json.dumps(result, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="attestor-arango",
        description="Shared, bi-temporal, auditable memory for teams of LLM agents.",
    )
    parser.add_argument("--config", help="YAML config file (default: $ATTESTOR_CONFIG)")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("init", help="create the store's schema (idempotent)")
    p.add_argument("--backend", choices=["embedded", "arangodb"])
    p.add_argument("--path", help="embedded store file or directory")
    p.set_defaults(func=_cmd_init)

    p = sub.add_parser("demo", help="run the guided demo on a fresh embedded store")
    p.add_argument("--path", help="directory for the demo store (default: a new temp dir)")
    p.add_argument("--json", action="store_true", help="also print the results as JSON")
    p.set_defaults(func=_cmd_demo)

    from attestor_arango.interfaces.cli import commands, hooks, server, vector_index

    server.register(sub)
    commands.register(sub)
    hooks.register(sub)
    vector_index.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command; typed errors become the documented exit codes (see cli_output)."""
    from attestor_arango.errors import AttestorError
    from attestor_arango.interfaces.cli.output import report_error

    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except AttestorError as err:
        return report_error(err, bool(getattr(args, "json", False)))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
