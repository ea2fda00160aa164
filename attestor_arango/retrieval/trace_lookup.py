"""Finding a recorded recall in the trace by its recall id, for one tenant.

Only the caller's tenant's files are read (``trace.tenant_generations``): the shared file
earlier versions wrote for every tenant, then the tenant's own file, each oldest rotated
file first, so a recall whose events were rotated away is still found and another
tenant's events cost the lookup nothing (only the shared file of earlier versions holds
any). An event is still only matched against the caller's own tenant and namespace,
which each start event records: another tenant's recall id is not found, whatever id is
asked for. Files are read line by line and only lines holding the id are parsed, so a
lookup costs one pass over them and little memory. A recall recorded more than once (a
replay at a pinned ``as_of`` has the same id) is answered with its newest complete run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from attestor_arango.clock import from_us
from attestor_arango.errors import NotFoundError, ValidationError
from attestor_arango.models import RecordedRecall, TraceStep
from attestor_arango.retrieval.trace_files import tenant_generations
from attestor_arango.scope import Scope

_RECALL_ID = re.compile(r"rc_[0-9a-f]{24}")


def check_recall_id(recall_id: object) -> str:
    if not isinstance(recall_id, str) or not _RECALL_ID.fullmatch(recall_id):
        raise ValidationError(
            "recall_id must be a recall id as recall returns it: 'rc_' and 24 hex digits"
        )
    return recall_id


def find_recall(path: str | Path | None, scope: Scope, recall_id: str) -> RecordedRecall:
    """The newest complete run of ``recall_id`` in the caller's tenant and namespace.

    Raises ``NotFoundError`` when tracing is off, the file does not exist yet, or it holds
    no such recall for this scope (another tenant's recall is never found).
    """
    if path is None:
        raise NotFoundError(
            "recall traces are off, so no recall is recorded: set trace.enabled "
            "(ATTESTOR_TRACE=1) and run the recall again"
        )
    runs: list[list[dict[str, Any]]] = []
    for file in tenant_generations(Path(path).expanduser(), scope.tenant):
        if file.is_file():
            _read_runs(file, scope, recall_id, runs)
    complete = [run for run in runs if run and run[-1].get("step") == "budget"]
    if not complete:
        raise NotFoundError(
            f"no recorded recall {recall_id} in namespace {scope.namespace!r} of your tenant; "
            "check the id and the namespace (the trace holds recalls since tracing was on)"
        )
    return _record(recall_id, complete[-1], len(complete))


def _read_runs(file: Path, scope: Scope, recall_id: str, runs: list[list[dict[str, Any]]]) -> None:
    """Appends to ``runs`` the events of ``recall_id`` in ``file``: a start event opens a
    run (an empty one when it is another scope's), later events join the open run."""
    with file.open(encoding="utf-8") as fh:
        for line in fh:
            if recall_id not in line:
                continue
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                continue  # a torn last line of a crashed writer (or one nested too deeply)
            if not isinstance(event, dict) or event.get("recall_id") != recall_id:
                continue
            if event.get("step") == "start":
                runs.append([event] if _ours(event, scope) else [])
            elif runs and runs[-1]:
                runs[-1].append(event)


def _ours(start: dict[str, Any], scope: Scope) -> bool:
    return start.get("tenant") == scope.tenant and start.get("namespace") == scope.namespace


def _record(recall_id: str, run: list[dict[str, Any]], count: int) -> RecordedRecall:
    start, last = run[0], run[-1]
    window = start.get("window")
    errors = {str(e["step"]): str(e["error"]) for e in run if e.get("error") is not None}
    return RecordedRecall(
        recall_id=recall_id,
        tenant=str(start["tenant"]),
        namespace=start.get("namespace"),
        query=start.get("query"),
        as_of=from_us(int(start["as_of"])),
        time_window=(from_us(int(window[0])), from_us(int(window[1]))) if window else None,
        token_budget=int(start["budget"]),
        result_ids=tuple(str(i) for i in last.get("ids") or ()),
        tokens_used=int(last.get("tokens_used") or 0),
        errors=errors,
        steps=tuple(
            TraceStep(
                step=str(e.get("step")),
                candidates_in=int(e.get("candidates_in") or 0),
                candidates_out=int(e.get("candidates_out") or 0),
                ms=float(e.get("ms") or 0.0),
                error=e.get("error"),
            )
            for e in run
        ),
        runs=count,
    )
