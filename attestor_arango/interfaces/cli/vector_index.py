"""``attestor-arango vector-index``: create (when trainable) or rebuild the vector index.

Registered by the main CLI; the work is in ``connect.ensure_vector_index_for`` and
``connect.rebuild_vector_index``. Prints the index status as JSON; exit code 0 when the
index exists or was (re)created, or was deferred because too few vectors exist yet, and 1
when it was refused (tenants with different dimensions) or its creation failed.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

OK_STATUSES = frozenset({"exists", "created", "rebuilt", "deferred"})


def _cmd_vector_index(args: argparse.Namespace) -> int:
    from attestor_arango.config import load_config
    from attestor_arango.errors import ValidationError
    from attestor_arango.store.arango.connect import ensure_vector_index_for, rebuild_vector_index

    config = load_config(args.config, backend=args.backend)
    if config.backend != "arangodb":
        raise ValidationError(
            "vector-index applies to the ArangoDB backend; pass --backend arangodb or set "
            "ATTESTOR_BACKEND=arangodb",
        )
    report = rebuild_vector_index(config) if args.rebuild else ensure_vector_index_for(config)
    print(json.dumps(report, indent=2, default=str))
    return 0 if report.get("status") in OK_STATUSES else 1


def register(sub: Any) -> None:
    p = sub.add_parser(
        "vector-index",
        help="ArangoDB: create the vector index once enough vectors exist, or --rebuild it",
    )
    p.add_argument(
        "--backend", choices=["embedded", "arangodb"], help="store backend (default: config's)"
    )
    p.add_argument(
        "--rebuild", action="store_true", help="drop and re-train over the vectors stored now"
    )
    p.set_defaults(func=_cmd_vector_index)
