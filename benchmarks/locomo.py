"""LoCoMo evidence recall: how often recall puts the evidence turns of a question on top.

    python benchmarks/locomo.py --data ../shared/data/locomo [--conversations 26,30]
        [--embedder auto|local|hashing] [--loader conversation|add] [--no-ablation]
        [--retrieval JSON] [--out FILE]

Loads both shapes of the data set: a directory (or file) of one-conversation
JSON files, and the single-file ``locomo10.json`` list. Each conversation goes
into its own tenant through the public API only, at the default token budget:
``--loader conversation`` (the default) hands every turn to ``add_turns`` with
its speaker, session and message time, and the library links neighbours and
knows speakers itself; ``--loader add`` is what a caller's own code does with no
conversation API, one ``add()`` per turn with speaker and date in the text and
the message time as ``valid_from`` (no entity, no session, no neighbours).
``dia_id`` and the session number go into metadata, to score against the gold.
Then, for every question of categories 1-4, recall runs with no LLM and the ranked
turns are scored against the gold evidence: turn-level recall@1/5/10 (any evidence
turn in the top k), all-evidence recall@10, session-level recall@5/10 (over the
distinct sessions in rank order), MRR and NDCG@10, per category and overall, plus
recall latency. The ablation re-runs the questions with pipeline steps switched off.
Synthetic relation candidates are not turns and are left out of the turn ranking.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_metrics import (
    RESULTS_DIR,
    all_at,
    dedupe,
    hit_at,
    mean,
    ndcg_at,
    percentile,
    reciprocal_rank,
    write_report,
)

from attestor_arango.clock import ManualClock
from attestor_arango.config import load_config
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import Embedder, HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.ingest.conversation import ConversationTurn
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval import RetrievalConfig

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    session: int
    when: datetime
    index: int  # position within its session


@dataclass
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    qa: list[dict[str, Any]] = field(default_factory=list)


# -- loading ----------------------------------------------------------------------------------


def parse_session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware UTC datetime (the data set gives no zone)."""
    clean = " ".join(text.replace(",", " ").split())
    for fmt in ("%I:%M %p on %d %B %Y", "%I:%M %p on %d %b %Y", "%d %B %Y"):
        try:
            return datetime.strptime(clean, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo session time {text!r}")


def conversation_from(raw: dict[str, Any], sample_id: str) -> Conversation:
    conv = raw.get("conversation", raw)
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)) and conv[k])
    turns: list[Turn] = []
    for n in sessions:
        when = parse_session_time(conv[f"session_{n}_date_time"])
        for i, t in enumerate(conv[f"session_{n}"]):
            turns.append(
                Turn(
                    dia_id=t["dia_id"],
                    speaker=t["speaker"],
                    text=t.get("text", ""),
                    caption=t.get("blip_caption"),
                    session=n,
                    when=when + timedelta(seconds=30 * i),
                    index=i,
                )
            )
    return Conversation(
        sample_id=str(raw.get("sample_id", sample_id)),
        speakers=(conv["speaker_a"], conv["speaker_b"]),
        turns=turns,
        qa=list(raw.get("qa", [])),
    )


def load_conversations(path: str | Path) -> list[Conversation]:
    """A directory of per-conversation files, one such file, or the locomo10.json list."""
    p = Path(path)
    files = sorted(p.glob("*.json")) if p.is_dir() else [p]
    out: list[Conversation] = []
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        if isinstance(data, list):
            out += [conversation_from(d, f"{f.stem}-{i}") for i, d in enumerate(data)]
        elif isinstance(data, dict) and ("qa" in data or "conversation" in data):
            out.append(conversation_from(data, f.stem))
    if not out:
        raise SystemExit(f"no LoCoMo conversations found at {p}")
    return out


def short_id(sample_id: str) -> str:
    digits = re.findall(r"\d+", sample_id)
    return digits[-1] if digits else sample_id


def evidence_ids(qa: dict[str, Any]) -> set[str]:
    """Gold dia_ids; some entries pack several ids in one string ('D8:6; D9:17')."""
    ids: set[str] = set()
    for e in qa.get("evidence", []) or []:
        ids |= {f"D{a}:{b}" for a, b in _DIA.findall(str(e))}
    return ids


# -- ingest -----------------------------------------------------------------------------------


def turn_line(turn: Turn) -> str:
    """What a user's own code would store for a turn: speaker, date and the words said."""
    day = f"{turn.when.day} {turn.when:%B %Y}"
    text = f"{turn.speaker} ({day}): {turn.text}"
    if turn.caption:
        text += f" [shares a photo: {turn.caption}]"
    return text


def context_for(conv: Conversation) -> AgentContext:
    return AgentContext(
        agent_id="locomo",
        role=AgentRole.ORCHESTRATOR,
        tenant=f"locomo-{short_id(conv.sample_id)}",
        namespace="dialog",
    )


def ingest_add(mem: AgentMemory, conv: Conversation) -> AgentContext:
    """The baseline: one public ``add()`` per turn, speaker and date in the text, the
    message time as ``valid_from``; no entity, no session, no neighbours."""
    ctx = context_for(conv)
    for turn in conv.turns:
        mem.add(
            turn_line(turn),
            valid_from=turn.when,
            metadata={"dia_id": turn.dia_id, "session": turn.session},
            context=ctx,
        )
    return ctx


def ingest_conversation(mem: AgentMemory, conv: Conversation) -> AgentContext:
    """The conversation API: each turn with its speaker, session and message time."""
    ctx = context_for(conv)
    turns = [
        ConversationTurn(
            speaker=t.speaker,
            text=t.text + (f" [shares a photo: {t.caption}]" if t.caption else ""),
            session_id=f"S{t.session}",
            timestamp=t.when,
            metadata={"dia_id": t.dia_id, "session": t.session},
        )
        for t in conv.turns
    ]
    mem.add_turns(turns, context=ctx)
    return ctx


LOADERS = {"add": ingest_add, "conversation": ingest_conversation}


# -- evaluation -------------------------------------------------------------------------------

_OFF_LATE = {
    "decay_enabled": False,
    "boost_enabled": False,
    "freshness_enabled": False,
    "neighbour_weight": 0.0,
    "coverage_enabled": False,
}
ABLATIONS: list[tuple[str, dict[str, Any]]] = [
    ("vector only", {"bm25_enabled": False, "graph_enabled": False, **_OFF_LATE}),
    ("bm25 only", {"vector_enabled": False, "graph_enabled": False, **_OFF_LATE}),
    ("rrf", {"graph_enabled": False, **_OFF_LATE}),
    ("+graph", dict(_OFF_LATE)),
]
METRICS = ("turn_r1", "turn_r5", "turn_r10", "all_r10", "sess_r5", "sess_r10", "mrr", "ndcg10")


def score_question(ranked_turns: list[str], gold: set[str]) -> dict[str, float]:
    sessions = dedupe(t.split(":")[0] for t in ranked_turns)
    gold_sessions = {g.split(":")[0] for g in gold}
    return {
        "turn_r1": hit_at(ranked_turns, gold, 1),
        "turn_r5": hit_at(ranked_turns, gold, 5),
        "turn_r10": hit_at(ranked_turns, gold, 10),
        "all_r10": all_at(ranked_turns, gold, 10),
        "sess_r5": hit_at(sessions, gold_sessions, 5),
        "sess_r10": hit_at(sessions, gold_sessions, 10),
        "mrr": reciprocal_rank(ranked_turns, gold),
        "ndcg10": ndcg_at(ranked_turns, gold, 10),
    }


def questions(conv: Conversation) -> list[tuple[dict[str, Any], set[str]]]:
    out = []
    for qa in conv.qa:
        gold = evidence_ids(qa)
        if qa.get("category") in CATEGORIES and gold:
            out.append((qa, gold))
    return out


def run_questions(
    mem: AgentMemory,
    convs: Sequence[Conversation],
    contexts: dict[str, AgentContext],
    progress: Progress,
    label: str,
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    total = sum(len(questions(c)) for c in convs)
    task = progress.add_task(f"recall: {label}", total=total)
    for conv in convs:
        ctx = contexts[conv.sample_id]
        for qa, gold in questions(conv):
            t0 = time.perf_counter()
            resp = mem.recall(str(qa["question"]), context=ctx)
            latencies.append((time.perf_counter() - t0) * 1000)
            ranked = dedupe(
                str(r.memory.metadata["dia_id"])
                for r in resp.results
                if not r.breakdown.synthetic and "dia_id" in r.memory.metadata
            )
            row = score_question(ranked, gold)
            row.update(conversation=short_id(conv.sample_id), category=int(qa["category"]))
            rows.append(row)
            progress.advance(task)
    return summarise(rows, latencies)


def summarise(rows: list[dict[str, Any]], latencies: list[float]) -> dict[str, Any]:
    def agg(subset: list[dict[str, Any]]) -> dict[str, float]:
        out = {m: round(mean([r[m] for r in subset]), 4) for m in METRICS}
        out["n"] = len(subset)
        return out

    per_cat = {
        f"{c}-{name}": agg([r for r in rows if r["category"] == c])
        for c, name in CATEGORIES.items()
        if any(r["category"] == c for r in rows)
    }
    per_conv = {
        cid: agg([r for r in rows if r["conversation"] == cid])
        for cid in sorted({r["conversation"] for r in rows})
    }
    return {
        "overall": agg(rows),
        "per_category": per_cat,
        "per_conversation": per_conv,
        "latency_ms": {
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
        },
    }


def pick_embedder(choice: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    try:
        from attestor_arango.embeddings.chain import make_embedder
    except ImportError:
        return HashingEmbedder()
    return make_embedder(load_config(embedder=choice))


def build(
    convs: Sequence[Conversation],
    embedder: Embedder,
    loader: str,
    workdir: Path,
    progress: Progress,
) -> tuple[AgentMemory, dict[str, AgentContext]]:
    last = max(t.when for c in convs for t in c.turns)
    clock = ManualClock(last + timedelta(days=1))
    mem = AgentMemory(workdir / "locomo.db", embedder=embedder, clock=clock, ids=SeededIdSource(1))
    contexts: dict[str, AgentContext] = {}
    task = progress.add_task("ingest", total=sum(len(c.turns) for c in convs))
    for conv in convs:
        contexts[conv.sample_id] = LOADERS[loader](mem, conv)
        progress.advance(task, len(conv.turns))
    return mem, contexts


def table(runs: dict[str, dict[str, Any]], title: str) -> Table:
    t = Table(title=title)
    t.add_column("run")
    for m in (*METRICS, "p50 ms", "p95 ms"):
        t.add_column(m, justify="right")
    for name, res in runs.items():
        o = res["overall"]
        lat = res["latency_ms"]
        t.add_row(name, *(f"{o[m]:.3f}" for m in METRICS), f"{lat['p50']:.1f}", f"{lat['p95']:.1f}")
    return t


def category_table(res: dict[str, Any], title: str) -> Table:
    t = Table(title=title)
    t.add_column("category")
    t.add_column("n", justify="right")
    for m in METRICS:
        t.add_column(m, justify="right")
    for name, o in [*res["per_category"].items(), ("overall", res["overall"])]:
        t.add_row(name, str(o["n"]), *(f"{o[m]:.3f}" for m in METRICS))
    return t


def main(argv: Iterable[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    here = Path(__file__).resolve()
    ap.add_argument("--data", default=str(here.parents[2] / "shared" / "data" / "locomo"))
    ap.add_argument("--conversations", default="", help="comma-separated ids, e.g. 26,30")
    ap.add_argument("--embedder", default="local", help="local | hashing | auto | ollama | openai")
    ap.add_argument("--loader", default="conversation", choices=sorted(LOADERS))
    ap.add_argument("--retrieval", default="{}", help="JSON overrides of RetrievalConfig")
    ap.add_argument("--no-ablation", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(list(argv) if argv is not None else None)

    convs = load_conversations(args.data)
    if args.conversations:
        wanted = {x.strip() for x in args.conversations.split(",")}
        convs = [c for c in convs if short_id(c.sample_id) in wanted]
    console = Console()
    embedder = pick_embedder(args.embedder)
    full = RetrievalConfig.from_dict(json.loads(args.retrieval))
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, Progress(console=console) as progress:
        mem, contexts = build(convs, embedder, args.loader, Path(tmp), progress)
        try:
            plan = [] if args.no_ablation else list(ABLATIONS)
            plan.append(("full pipeline", {}))
            for name, changes in plan:
                mem.retrieval_config = full.replace(**changes)
                runs[name] = run_questions(mem, convs, contexts, progress, name)
        finally:
            mem.close()
    ids = ",".join(short_id(c.sample_id) for c in convs)
    title = f"LoCoMo [{ids}] embedder={embedder.name} loader={args.loader}"
    console.print(table(runs, title))
    console.print(category_table(runs["full pipeline"], f"full pipeline per category ({title})"))
    report = {
        "benchmark": "locomo",
        "embedder": embedder.name,
        "conversations": [short_id(c.sample_id) for c in convs],
        "questions": runs["full pipeline"]["overall"]["n"],
        "loader": args.loader,
        "llm_in_read_path": False,
        "config": full.to_dict(),
        "runs": runs,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    out = (
        Path(args.out)
        if args.out
        else RESULTS_DIR / f"locomo-{ids.replace(',', '_')}-{embedder.name}-{args.loader}.json"
    )
    console.print(f"wrote {write_report(report, out)}")
    return report


if __name__ == "__main__":
    main()
