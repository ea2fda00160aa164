"""The team's own dialogues (cases.py): a guard against fitting LoCoMo dev.

    python benchmarks/dialogues/run.py [--loader conversation|add|add-session]
        [--embedder local|hashing] [--retrieval JSON] [--out FILE]

Each dialogue goes into its own tenant, stored the way a user would: ``conversation``
sends every turn through ``add_turns`` (speaker, session, message time);
``add`` calls ``add("<speaker> (<day>): <text>", valid_from=message time)`` per turn;
``add-session`` does the same with the session as ``context.session_id``. The clock
stands one day after the last session. Every question is recalled with the default
budget and no LLM; the ranked turns are scored against the evidence turns: turn
R@1/3/5 (any evidence turn in the top k), MRR, session R@1/2. The dialogues are
small (30-50 turns), so R@10 would be near 1 everywhere: the top ranks are what
tell. JSON goes to ``benchmarks/results/dialogues-<embedder>-<loader>.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from cases import DIALOGUES, Dialogue  # noqa: E402
from retrieval_metrics import RESULTS_DIR, dedupe, hit_at, mean, reciprocal_rank  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from attestor_arango.clock import ManualClock  # noqa: E402
from attestor_arango.config import load_config  # noqa: E402
from attestor_arango.context import AgentContext, AgentRole  # noqa: E402
from attestor_arango.embeddings import Embedder, HashingEmbedder  # noqa: E402
from attestor_arango.ids import SeededIdSource  # noqa: E402
from attestor_arango.memory import AgentMemory  # noqa: E402
from attestor_arango.retrieval import RetrievalConfig  # noqa: E402

METRICS = ("turn_r1", "turn_r3", "turn_r5", "mrr", "sess_r1", "sess_r2")


def pick_embedder(choice: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    from attestor_arango.embeddings.chain import make_embedder

    return make_embedder(load_config(embedder=choice))


def store(mem: AgentMemory, dialogue: Dialogue, loader: str) -> AgentContext:
    """Writes one dialogue through the public API; returns the context to recall with."""
    ctx = AgentContext(
        agent_id="dialogues",
        role=AgentRole.ORCHESTRATOR,
        tenant=f"dlg-{dialogue['id']}",
        namespace="chat",
    )
    for s, (when, turns) in enumerate(dialogue["sessions"], start=1):
        start = datetime.fromisoformat(when)
        rows = []
        for t, (speaker, text) in enumerate(turns, start=1):
            at = start + timedelta(minutes=t)
            meta = {"turn_id": f"S{s}:{t}"}
            rows.append({"speaker": speaker, "text": text, "timestamp": at, "metadata": meta})
        if loader == "conversation":
            for row in rows:
                row["session_id"] = f"{dialogue['id']}-S{s}"
            mem.add_turns(rows, context=ctx)
            continue
        run_ctx = ctx
        if loader == "add-session":
            run_ctx = replace(ctx, session_id=f"{dialogue['id']}-S{s}")
        for row in rows:
            at = row["timestamp"]
            line = f"{row['speaker']} ({at.day} {at:%B %Y}): {row['text']}"
            mem.add(line, valid_from=at, metadata=row["metadata"], context=run_ctx)
    return ctx


def score(ranked: list[str], gold: set[str]) -> dict[str, float]:
    sessions = dedupe(t.split(":")[0] for t in ranked)
    gold_sessions = {g.split(":")[0] for g in gold}
    return {
        "turn_r1": hit_at(ranked, gold, 1),
        "turn_r3": hit_at(ranked, gold, 3),
        "turn_r5": hit_at(ranked, gold, 5),
        "mrr": reciprocal_rank(ranked, gold),
        "sess_r1": hit_at(sessions, gold_sessions, 1),
        "sess_r2": hit_at(sessions, gold_sessions, 2),
    }


def evaluate(
    embedder: Embedder, loader: str, config: RetrievalConfig, workdir: Path
) -> dict[str, Any]:
    """Stores every dialogue, asks every question; per-dialogue and overall means."""
    last = max(datetime.fromisoformat(when) for d in DIALOGUES for when, _ in d["sessions"])
    clock = ManualClock(last + timedelta(days=1))
    mem = AgentMemory(workdir / "dlg.db", embedder=embedder, clock=clock, ids=SeededIdSource(7))
    mem.retrieval_config = config
    rows: list[dict[str, Any]] = []
    try:
        for dialogue in DIALOGUES:
            ctx = store(mem, dialogue, loader)
            for question, gold in dialogue["questions"]:
                resp = mem.recall(question, context=ctx)
                ranked = dedupe(
                    str(r.memory.metadata["turn_id"])
                    for r in resp.results
                    if not r.breakdown.synthetic and "turn_id" in r.memory.metadata
                )
                row: dict[str, Any] = score(ranked, set(gold))
                row.update(dialogue=dialogue["id"], question=question, top=ranked[:5])
                rows.append(row)
    finally:
        mem.close()

    def agg(subset: list[dict[str, Any]]) -> dict[str, float]:
        out = {m: round(mean([r[m] for r in subset]), 4) for m in METRICS}
        out["n"] = len(subset)
        return out

    return {
        "overall": agg(rows),
        "per_dialogue": {
            d["id"]: agg([r for r in rows if r["dialogue"] == d["id"]]) for d in DIALOGUES
        },
        "misses": [
            {"dialogue": r["dialogue"], "question": r["question"], "top": r["top"]}
            for r in rows
            if not r["turn_r1"]
        ],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--loader", default="conversation", choices=["conversation", "add", "add-session"]
    )
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--retrieval", default="{}", help="JSON overrides of RetrievalConfig")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    embedder = pick_embedder(args.embedder)
    config = RetrievalConfig.from_dict(json.loads(args.retrieval))
    with tempfile.TemporaryDirectory() as tmp:
        res = evaluate(embedder, args.loader, config, Path(tmp))
    table = Table(title=f"own dialogues, embedder={embedder.name} loader={args.loader}")
    table.add_column("dialogue")
    table.add_column("n", justify="right")
    for m in METRICS:
        table.add_column(m, justify="right")
    for name, o in [*res["per_dialogue"].items(), ("overall", res["overall"])]:
        table.add_row(name, str(o["n"]), *(f"{o[m]:.3f}" for m in METRICS))
    Console().print(table)
    report = {
        "benchmark": "dialogues",
        "embedder": embedder.name,
        "loader": args.loader,
        "llm_in_read_path": False,
        "config_overrides": json.loads(args.retrieval),
        **res,
    }
    out = (
        Path(args.out)
        if args.out
        else RESULTS_DIR / f"dialogues-{embedder.name}-{args.loader}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    Console().print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
