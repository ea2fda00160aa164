"""CLI commands for keeping a store in shape: `reembed`, `compact`, `update`, `quickstart`.

Each calls one AgentMemory method (``quickstart`` runs ``init`` and ``doctor``), as the
API and REST do; ``compact``, ``update`` and ``quickstart`` carry Attestor's command names.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from attestor_arango.interfaces.cli import output as out
from attestor_arango.interfaces.cli.commands import (
    Handler,
    _metadata,
    common_options,
    run_with_memory,
)
from attestor_arango.interfaces.cli.parsing import number_arg, time_arg, whole_number

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory


def cmd_reembed(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    """Re-embeds with a progress bar on stderr (shown only on a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    show = sys.stderr.isatty() and not args.json
    bar = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=not show,
        transient=False,
    )
    with bar:
        task = bar.add_task(f"re-embedding with {mem.embedder.name}", total=None)

        def step(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        report = mem.reembed(batch_size=args.batch_size, progress=step)
    return report, "reembed", 0


def cmd_compact(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    return mem.compact(older_than=args.older_than, dry_run=args.dry_run), "compact", 0


def cmd_update(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    given: dict[str, Any] = {
        "content": args.content,
        "tags": args.tag,
        "confidence": args.confidence,
        "valid_from": args.valid_from,
        "valid_until": args.valid_until,
        "metadata": _metadata(args.metadata),
    }
    if args.entity is not None:
        given["entity"] = args.entity
    if args.category is not None:
        given["category"] = args.category
    return mem.update(args.memory_id, **given), "updated", 0


def cmd_quickstart(args: argparse.Namespace) -> int:
    """Creates the store if needed, checks it, and prints what to type next."""
    from attestor_arango.config import load_config
    from attestor_arango.interfaces.cli.doctor import run_doctor

    config = load_config(getattr(args, "config", None), path=args.path)
    report = run_doctor(config)  # opening the store creates its schema (idempotent)
    where = str(config.db_path()) if config.backend == "embedded" else config.arango.url
    data = {"backend": config.backend, "store": where, **report.to_dict()}
    next_steps = [
        'attestor-arango add "Alice is the engineering manager" --entity alice --category role',
        'attestor-arango recall "who runs engineering?"',
        "attestor-arango doctor",
    ]
    data["next"] = next_steps
    if args.json:
        out.emit_json(data)
    else:
        print(f"store: {where} ({config.backend})")
        for check in report.checks:
            mark = "ok" if check.ok else ("warn" if check.warning else "FAIL")
            print(f"  {mark:4} {check.name}: {check.detail}")
            if not check.ok and check.fix:
                print(f"       fix: {check.fix}")
        print("next:")
        for line in next_steps:
            print(f"  {line}")
    return out.EXIT_OK if report.ok else out.EXIT_OTHER


def register(sub: Any) -> None:
    common = common_options()

    def cmd(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, parents=[common], help=help_text)
        p.set_defaults(func=run_with_memory(handler))
        return p

    p = cmd(
        "reembed",
        cmd_reembed,
        "move your tenant's vectors to the configured embedder (resumable; orchestrator)",
    )
    p.add_argument(
        "--batch-size",
        type=whole_number,
        default=256,
        help="memories embedded per batch (default 256)",
    )

    p = cmd("compact", cmd_compact, "remove rows archived long ago (orchestrator)")
    p.add_argument(
        "--older-than", required=True, help="archived longer ago than this: '30d', '12h' or days"
    )
    p.add_argument("--dry-run", action="store_true", help="list what would go, remove nothing")

    p = cmd("update", cmd_update, "write a new version of a memory (the old one is closed)")
    p.add_argument("memory_id", help="its id, or an unambiguous start or end of it")
    p.add_argument("--content", help="new text (default: unchanged)")
    p.add_argument("--entity", help="new entity (default: unchanged)")
    p.add_argument("--category", help="new category (default: unchanged)")
    p.add_argument("--tag", action="append", help="replace the tags (repeatable)")
    p.add_argument("--confidence", type=number_arg, help="new confidence 0-1 (default: unchanged)")
    p.add_argument("--valid-from", type=time_arg, help="new event-time start (default: same)")
    p.add_argument("--valid-until", type=time_arg, help="new event-time end (default: same)")
    p.add_argument("--metadata", help="replace the metadata with this JSON object")

    p = sub.add_parser(
        "quickstart", parents=[common], help="create the store, check it, print the next steps"
    )
    p.set_defaults(func=cmd_quickstart)
