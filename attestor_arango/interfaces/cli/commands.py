"""The CLI's memory commands: each parses its flags and calls one AgentMemory method.

Identity comes from the environment (``ATTESTOR_AGENT_ID``, ``_ROLE``, ``_TENANT``,
``_NAMESPACE``...) or the matching flags, SOLO by default; AgentMemory checks the
permissions, exactly as for a library caller.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from attestor_arango.config import load_config, read_document
from attestor_arango.context import AgentContext
from attestor_arango.core.audit import audit_seq, purge_began_since
from attestor_arango.errors import ConflictError, ValidationError
from attestor_arango.governance.export_files import ledger_path, record_export
from attestor_arango.interfaces.cli import output as out
from attestor_arango.interfaces.cli.parsing import anchor_arg, number_arg, time_arg, whole_number
from attestor_arango.jsontext import load_json
from attestor_arango.scope import Scope, check_name

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

Handler = Callable[[argparse.Namespace, Any], tuple[Any, str, int]]


def common_options() -> argparse.ArgumentParser:
    """Flags every memory command takes (a parent parser)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--path", help="embedded store file or directory ($ATTESTOR_PATH)")
    parent.add_argument("--agent-id", help="act as this agent ($ATTESTOR_AGENT_ID)")
    parent.add_argument("--role", help="agent role ($ATTESTOR_ROLE; default orchestrator)")
    parent.add_argument("--tenant", help="tenant ($ATTESTOR_TENANT; default local)")
    parent.add_argument("--namespace", help="namespace ($ATTESTOR_NAMESPACE; default inbox)")
    return parent


def open_memory(args: argparse.Namespace, *, read_only: bool = False) -> AgentMemory:
    """The memory a CLI command (or the server it starts) works on; ``read_only`` makes
    its identity read-only whatever the environment says (the local board's).

    The CLI is a process of its own, so it sets the BLAS thread count here (see
    ``core/blas.py``); the library never does that to a host program. The embedder is
    built on first use: ``list``, ``get`` or ``stats`` never load a model.
    """
    from attestor_arango.core.blas import limit_blas_threads
    from attestor_arango.embeddings.lazy import LazyEmbedder
    from attestor_arango.memory import AgentMemory

    config = load_config(getattr(args, "config", None), path=getattr(args, "path", None))
    limit_blas_threads(config.blas_threads)
    # a flag given empty ("--tenant ''") is refused by AgentContext, never read as absent:
    # a scripted tenant that came out blank must fail, not fall back to another tenant
    overrides = {
        key: getattr(args, key)
        for key in ("agent_id", "role", "tenant", "namespace")
        if getattr(args, key, None) is not None
    } | ({"read_only": True} if read_only else {})
    return AgentMemory(
        config=config,
        embedder=LazyEmbedder(lambda: _make_embedder(config)),
        context=AgentContext.from_env(**overrides),
    )


def _make_embedder(config: Any) -> Any:
    """The configured embedder; its module (and httpx) is imported only when one is made."""
    from attestor_arango.embeddings.chain import make_embedder

    return make_embedder(config)


def run_with_memory(handler: Handler) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        memory = open_memory(args)
        try:
            value, title, code = handler(args, memory)
        finally:
            memory.close()
        if value is not None:
            as_json = out.machine(args.json)
            if title == "recall" and not as_json:
                Console().print(out.recall_table(out.jsonable(value)))
            else:
                out.show(value, title, as_json)
        return code

    return run


def _metadata(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    data = load_json(text, "--metadata")
    if not isinstance(data, dict):
        raise ValidationError("--metadata must be a JSON object")
    return data


def _load_document(path: str) -> Any:
    return read_document(Path(path).expanduser(), "file", "give the path of an existing file")


def _window(args: argparse.Namespace) -> tuple[str, str] | None:
    start, end = getattr(args, "window_start", None), getattr(args, "window_end", None)
    if start is None and end is None:
        return None
    if start is None or end is None:
        raise ValidationError("give both --window-start and --window-end")
    return (start, end)


def cmd_add(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    memory = mem.add(
        args.content,
        entity=args.entity,
        category=args.category,
        tags=tuple(args.tag or ()),
        confidence=args.confidence,
        valid_from=args.valid_from,
        valid_until=args.valid_until,
        metadata=_metadata(args.metadata),
    )
    return memory, "added", 0


def cmd_recall(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    if args.pack:
        pack = mem.recall_as_pack(args.query, as_of=args.as_of, token_budget=args.budget)
        return pack, "recall pack", 0
    return (
        mem.recall(
            args.query, as_of=args.as_of, time_window=_window(args), token_budget=args.budget
        ),
        "recall",
        0,
    )


def cmd_search(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    found = mem.search(
        args.query,
        limit=args.limit,
        entity=args.entity,
        category=args.category,
        tags=args.tag,
        status=args.status,
        as_of=args.as_of,
    )
    return found, "search", 0


def cmd_list(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    rows = mem.list(
        entity=args.entity,
        category=args.category,
        tags=args.tag,
        status=args.status,
        time_window=_window(args),
        as_of=args.as_of,
        limit=args.limit,
        offset=args.offset,
    )
    return rows, "memories", 0


def cmd_get(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    return mem.get(args.memory_id, as_of=args.as_of, time_window=_window(args)), "memory", 0


def cmd_timeline(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    found = mem.timeline(args.entity, as_of=args.as_of, time_window=_window(args))
    return found, f"timeline of {args.entity}", 0


def cmd_stats(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    return mem.stats(), "stats", 0


def cmd_forget(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    return mem.forget(args.memory_id, reason=args.reason), "forgotten", 0


def _output_file(path: str, config: Any) -> Path:
    """Where ``export -o`` writes, checked before the export runs: an export is audited, so
    a destination that cannot be written must be refused before anything is read or logged.
    Raises ``ValidationError`` for a missing folder, a folder in the way, no write access,
    and one of the store's own files (``Config.store_files``, the export ledger).
    """
    file = Path(path).expanduser()
    folder = file.parent
    own = config.store_files() | {ledger_path(config).resolve()}
    if file.resolve() in own or any(_same_file(file, other) for other in own):
        raise ValidationError(
            f"--output {file} is one of the store's own files; write the export elsewhere"
        )
    if file.is_dir():
        raise ValidationError(f"--output {file} is a folder; name a file to write")
    if not folder.is_dir():
        raise ValidationError(f"--output {file}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (file.exists() and not os.access(file, os.W_OK)):
        raise ValidationError(f"--output {file} cannot be written; check its permissions")
    return file


def _same_file(one: Path, other: Path) -> bool:
    """Whether both name one existing file (a hard link names the store's too)."""
    try:
        return one.exists() and other.exists() and one.samefile(other)
    except OSError:
        return False


def _user(args: argparse.Namespace, mem: AgentMemory) -> str:
    """The tenant ``--user`` names, the caller's own when the flag is absent. Given empty it
    is refused as malformed (``ValidationError``, as ``--tenant ''``), before anything is
    read: a scripted subject that came out blank must fail, not act on the caller's own
    tenant."""
    return mem.default_context.tenant if args.user is None else check_name(args.user, "user")


def cmd_export(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    target = _output_file(args.output, mem.config) if args.output else None
    user = _user(args, mem)
    began = audit_seq(mem.store, Scope(user)) if target is not None else 0
    data = mem.export_user(user)
    if target is not None:
        try:
            target.write_text(json.dumps(out.jsonable(data), indent=2), encoding="utf-8")
            if not args.keep:  # a purge of the tenant deletes it (governance.export_files)
                record_export(mem.config, user, target)
        except OSError as exc:
            target.unlink(missing_ok=True)  # a copy no purge could find is not left
            raise ValidationError(f"--output {target} cannot be written: {exc}") from None
        if not args.keep and purge_began_since(mem.store, Scope(user), began):
            target.unlink(missing_ok=True)  # written after the purge looked for it
            raise ConflictError(
                f"tenant {user!r} was purged while the export ran; {target} was removed"
            )
        counts = {k: len(v) for k, v in data.items() if isinstance(v, list)}
        return {"written": args.output, **counts}, "export", 0
    return data, "export", 0


def cmd_import(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    data = _load_document(args.file)
    if not isinstance(data, dict):
        raise ValidationError(f"{args.file} must hold one export object")
    return mem.import_user(data), "imported", 0


def cmd_purge(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    user = _user(args, mem)
    if not args.yes:
        raise ValidationError(
            f"purge erases every memory, episode, vector and edge of tenant {user!r}; "
            "repeat with --yes to confirm",
        )
    report = mem.purge_user(user, args.reason)
    return report, "purge", 0 if report.ok else 1


def cmd_audit(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    if args.verify:
        report = mem.verify_audit_chain(args.user, anchor=args.anchor)
        if report.signature_note:
            print(f"warning: {report.signature_note}", file=sys.stderr)
        return report.to_dict(), "audit chain", 0 if report.ok else 1
    if args.deletions:
        return mem.deletion_audit_log(args.limit), "deletions", 0
    return mem.audit_log(limit=args.limit, after_seq=args.after), "audit log", 0


def cmd_retention(args: argparse.Namespace, mem: AgentMemory) -> tuple[Any, str, int]:
    policies = _load_document(args.policies) if args.policies else None
    if not policies and not mem.config.retention:
        print(
            "no retention policies: pass --policies FILE or put a `retention:` list in the "
            "config file (format: docs/configuration.md#retention); nothing was changed",
            file=sys.stderr,
        )
    report = mem.apply_retention(policies, dry_run=args.dry_run)
    return report.to_dict(), "retention", 0 if report.ok else 1


def register(sub: Any) -> None:
    """Adds the memory commands to the CLI's subparsers."""
    common = common_options()

    def cmd(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, parents=[common], help=help_text)
        p.set_defaults(func=run_with_memory(handler))
        return p

    def as_of(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--as-of",
            type=time_arg,
            help="read as of this time (ISO-8601 with Z, or epoch seconds; default: now)",
        )

    def filters(p: argparse.ArgumentParser) -> None:
        p.add_argument("--entity", help="only memories about this entity")
        p.add_argument("--category", help="only memories of this category")
        p.add_argument("--tag", action="append", help="only memories with this tag (repeatable)")
        p.add_argument(
            "--status",
            choices=["active", "superseded", "archived", "all"],
            help="lifecycle status to include (default: active)",
        )
        as_of(p)

    def window(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--window-start", type=time_arg, help="event-time window start (ISO-8601 or epoch s)"
        )
        p.add_argument(
            "--window-end", type=time_arg, help="event-time window end (ISO-8601 or epoch s)"
        )

    p = cmd("add", cmd_add, "store a fact")
    p.add_argument("content", help="the fact, as text")
    p.add_argument("--entity", help="who or what the fact is about (with --category: supersedes)")
    p.add_argument("--category", help="kind of fact, e.g. location, role, preference")
    p.add_argument("--tag", action="append", help="a tag (repeatable)")
    p.add_argument("--confidence", type=number_arg, default=1.0, help="belief in the fact, 0-1")
    p.add_argument(
        "--valid-from", type=time_arg, help="when it became true (ISO-8601/epoch s; default: now)"
    )
    p.add_argument("--valid-until", type=time_arg, help="when it stops being true (default: open)")
    p.add_argument("--metadata", help="a JSON object stored with the fact")

    p = cmd("recall", cmd_recall, "ranked, budgeted recall for a query")
    p.add_argument("query", help="what to recall, in words")
    p.add_argument("--budget", type=whole_number, help="token budget (default: the config's)")
    p.add_argument("--pack", action="store_true", help="return a context pack with its prompt")
    as_of(p)
    window(p)

    p = cmd("search", cmd_search, "keyword search")
    p.add_argument("query", nargs="?", help="words to look for (omit: filtered list)")
    p.add_argument("--limit", type=whole_number, default=10, help="most results")
    filters(p)

    p = cmd("list", cmd_list, "list memories by filters")
    filters(p)
    window(p)
    p.add_argument("--limit", type=whole_number, default=100, help="most rows")
    p.add_argument("--offset", type=whole_number, default=0, help="rows to skip")

    p = cmd("get", cmd_get, "show one memory")
    p.add_argument("memory_id", help="its id, or an unambiguous start or end of it")
    as_of(p)
    window(p)

    p = cmd("timeline", cmd_timeline, "every version of the facts about an entity")
    p.add_argument("entity", help="the entity whose facts to show")
    as_of(p)
    window(p)

    cmd("stats", cmd_stats, "counts for the tenant")

    p = cmd("export", cmd_export, "export a tenant (subject-access request)")
    p.add_argument("--user", help="tenant to export (default: your tenant)")
    p.add_argument("-o", "--output", help="write to this file instead of stdout")
    p.add_argument(
        "--keep",
        action="store_true",
        help="a copy kept on purpose (a backup to import after a purge): a purge of the "
        "tenant leaves this file; without it, a purge deletes the file",
    )

    p = cmd("import", cmd_import, "import an export into your (empty) tenant")
    p.add_argument("file", help="a JSON file written by `export`")

    p = cmd("forget", cmd_forget, "close a memory (orchestrator)")
    p.add_argument("memory_id", help="its id, or an unambiguous start or end of it")
    p.add_argument("--reason", help="why, recorded in the audit entry")

    p = cmd("purge", cmd_purge, "erase a tenant (GDPR); needs --yes")
    p.add_argument("--user", help="tenant to erase (default: your tenant)")
    p.add_argument("--reason", required=True, help="why, recorded before anything is erased")
    p.add_argument("--yes", action="store_true", help="confirm the erasure")

    p = cmd("audit", cmd_audit, "read or verify the audit chain")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--verify", action="store_true", help="verify the hash chain")
    group.add_argument("--deletions", action="store_true", help="deletion entries only")
    p.add_argument("--user", help="tenant to verify (default: your tenant)")
    p.add_argument(
        "--anchor",
        type=anchor_arg,
        metavar="SEQ:HASH",
        help="with --verify: last_seq:last_hash of an earlier report, kept outside the store "
        "(catches newest entries removed with the head record rewound)",
    )
    p.add_argument("--limit", type=whole_number, default=100, help="most entries")
    p.add_argument("--after", type=whole_number, default=0, help="entries after this seq")

    p = cmd("retention", cmd_retention, "apply retention policies")
    p.add_argument("--policies", help="YAML/JSON list of policies (default: config.retention)")
    p.add_argument(
        "--dry-run", action="store_true", help="report what would change, change nothing"
    )


def fail(message: str) -> int:
    print(message, file=sys.stderr)
    return out.EXIT_USAGE
