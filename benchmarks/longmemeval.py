"""LongMemEval session recall: does recall find the sessions that hold the answer?

    python benchmarks/longmemeval.py --data DIR_OR_FILE [--split oracle|s|m] [--limit N]
        [--embedder local|hashing] [--answer] [--out FILE]
    python benchmarks/longmemeval.py --write-fixture DIR   # a tiny data set in the same format

Reads the official files (``longmemeval_oracle.json``, ``longmemeval_s_cleaned.json``,
``longmemeval_m_cleaned.json``; the names without ``_cleaned`` too) from a file
or a cache directory. Each question's haystack goes into its own tenant and
namespace: every turn becomes one memory (role, session date and text; the
session id in metadata). The question is recalled at its ``question_date`` with
no LLM; the ranked turns give a ranked list of distinct sessions, scored
against ``answer_session_ids``: recall_any@k, recall_all@k (k = 1, 3, 5, 10)
and NDCG@10, per question type and overall. Abstention questions (``_abs``)
have no evidence and are counted but not scored. With ``--answer`` and an LLM
configured (``llm:`` in the config), the Chain-of-Note prompt of the recalled
pack is answered and judged by the same LLM at temperature 0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
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
    write_report,
)

from attestor_arango.clock import ManualClock, to_us
from attestor_arango.context import AgentContext, AgentRole
from attestor_arango.embeddings import Embedder, HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.retrieval.pack import ContextPack

FILES = {
    "oracle": ("longmemeval_oracle.json",),
    "s": ("longmemeval_s_cleaned.json", "longmemeval_s.json"),
    "m": ("longmemeval_m_cleaned.json", "longmemeval_m.json"),
}
KS = (1, 3, 5, 10)
_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2})(?:\s*\(\w+\))?\s*(\d{1,2}):(\d{2})")
_UNSAFE = re.compile(r"[^A-Za-z0-9._:@/-]")


def parse_date(text: str) -> datetime:
    """'2023/05/20 (Sat) 02:21' -> aware UTC datetime."""
    m = _DATE.search(text)
    if not m:
        raise ValueError(f"unrecognised LongMemEval date {text!r}")
    y, mo, d, h, mi = (int(x) for x in m.groups())
    return datetime(y, mo, d, h, mi, tzinfo=UTC)


def find_file(data: str | Path, split: str) -> Path:
    p = Path(data).expanduser()
    if p.is_file():
        return p
    for name in FILES[split]:
        for candidate in (p / name, p / "data" / name):
            if candidate.is_file():
                return candidate
    raise SystemExit(f"no LongMemEval {split} file ({' or '.join(FILES[split])}) under {p}")


def safe_name(text: str) -> str:
    name = _UNSAFE.sub("-", text).strip("-") or "q"
    return name[:100]


def ingest(mem: AgentMemory, item: dict[str, Any], index: int) -> AgentContext:
    ctx = AgentContext(
        agent_id="longmemeval",
        role=AgentRole.ORCHESTRATOR,
        tenant=f"lme-{index}",
        namespace=safe_name(f"q-{item['question_id']}"),
        token_budget=1_000_000,
    )
    sessions = item["haystack_sessions"]
    for sid, date, turns in zip(
        item["haystack_session_ids"], item["haystack_dates"], sessions, strict=True
    ):
        when = parse_date(date)
        in_session = ctx.with_session(str(sid))  # contexts are frozen
        for t, turn in enumerate(turns):
            text = str(turn.get("content", "")).strip()
            if not text:
                continue
            mem.add(
                f"{turn.get('role', 'user')} ({when:%Y-%m-%d}): {text}",
                tags=("verbatim",),
                valid_from=when + timedelta(seconds=t),
                metadata={"session_id": str(sid), "turn": t},
                context=in_session,
            )
    return ctx


def score(ranked_sessions: Sequence[str], gold: set[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        out[f"recall_any@{k}"] = hit_at(ranked_sessions, gold, k)
        out[f"recall_all@{k}"] = all_at(ranked_sessions, gold, k)
    out["ndcg@10"] = ndcg_at(ranked_sessions, gold, 10)
    return out


def answer_and_judge(llm: Any, pack: ContextPack, item: dict[str, Any]) -> dict[str, Any]:
    """Optional: the LLM answers from the pack's prompt, then judges its own answer."""
    reply = llm.complete(pack.render_prompt(), temperature=0.0)
    verdict = llm.complete(
        "Does the response answer the question the way the reference answer does? "
        "Reply yes or no.\n\n"
        f"Question: {item['question']}\nReference answer: {item['answer']}\nResponse: {reply}\n",
        temperature=0.0,
    )
    return {"answer": reply, "correct": verdict.strip().lower().startswith("yes")}


def run(
    items: Sequence[dict[str, Any]],
    embedder: Embedder,
    workdir: Path,
    progress: Progress,
    llm: Any = None,
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    task = progress.add_task("questions", total=len(items))
    first = min(parse_date(d) for it in items for d in it["haystack_dates"])
    clock = ManualClock(first - timedelta(days=1))
    with AgentMemory(
        workdir / "lme.db", embedder=embedder, clock=clock, ids=SeededIdSource(5)
    ) as mem:
        for index, item in enumerate(items):
            ctx = ingest(mem, item, index)
            asked = parse_date(item["question_date"])
            clock.set(max(to_us(asked), clock.now_us()))
            t0 = time.perf_counter()
            resp = mem.recall(str(item["question"]), context=ctx)
            latencies.append((time.perf_counter() - t0) * 1000)
            sessions = dedupe(
                str(r.memory.metadata["session_id"])
                for r in resp.results
                if not r.breakdown.synthetic and "session_id" in r.memory.metadata
            )
            row: dict[str, Any] = {
                "question_id": item["question_id"],
                "question_type": item["question_type"],
                "abstention": str(item["question_id"]).endswith("_abs"),
                "top_sessions": sessions[:10],
            }
            gold = {str(s) for s in item.get("answer_session_ids", [])}
            if not row["abstention"] and gold:
                row.update(score(sessions, gold))
            if llm is not None:
                row.update(answer_and_judge(llm, ContextPack.from_response(resp), item))
            rows.append(row)
            progress.advance(task)
    return summarise(rows, latencies)


def summarise(rows: list[dict[str, Any]], latencies: list[float]) -> dict[str, Any]:
    metrics = [f"recall_{w}@{k}" for w in ("any", "all") for k in KS] + ["ndcg@10"]

    def agg(sub: list[dict[str, Any]]) -> dict[str, Any]:
        scored = [r for r in sub if "ndcg@10" in r]
        out: dict[str, Any] = {m: round(mean([r[m] for r in scored]), 4) for m in metrics}
        out["n"] = len(sub)
        out["n_scored"] = len(scored)
        judged = [r for r in sub if "correct" in r]
        if judged:
            out["qa_accuracy"] = round(mean([1.0 if r["correct"] else 0.0 for r in judged]), 4)
        return out

    types = sorted({r["question_type"] for r in rows})
    return {
        "overall": agg(rows),
        "per_type": {t: agg([r for r in rows if r["question_type"] == t]) for t in types},
        "latency_ms": {
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
        },
        "questions": rows,
    }


def write_fixture(directory: str | Path) -> Path:
    """A tiny data set in the official format, written by this project for its tests."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)

    def sess(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
        return [{"role": r, "content": c} for r, c in pairs]

    filler = [
        sess(("user", "Can you suggest a pasta recipe?"), ("assistant", "Try carbonara.")),
        sess(("user", "What is the capital of Peru?"), ("assistant", "Lima.")),
        sess(("user", "Help me plan a birthday party."), ("assistant", "Start with a guest list.")),
    ]
    items = [
        {
            "question_id": "fx_user_1",
            "question_type": "single-session-user",
            "question": "What breed is my dog?",
            "answer": "A beagle",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["s_a", "s_dog", "s_b"],
            "haystack_dates": [
                "2023/05/01 (Mon) 09:00",
                "2023/05/10 (Wed) 09:00",
                "2023/05/20 (Sat) 09:00",
            ],
            "haystack_sessions": [
                filler[0],
                sess(
                    ("user", "My dog is a beagle named Rocky and he loves long walks."),
                    ("assistant", "Beagles are great companions!"),
                ),
                filler[1],
            ],
            "answer_session_ids": ["s_dog"],
        },
        {
            "question_id": "fx_multi_1",
            "question_type": "multi-session",
            "question": "How many marathons have I run in total?",
            "answer": "Two",
            "question_date": "2023/07/01 (Sat) 10:00",
            "haystack_session_ids": ["m1", "f1", "m2"],
            "haystack_dates": [
                "2023/03/01 (Wed) 09:00",
                "2023/04/01 (Sat) 09:00",
                "2023/05/01 (Mon) 09:00",
            ],
            "haystack_sessions": [
                sess(
                    ("user", "I just ran my first marathon in Boston!"),
                    ("assistant", "Congratulations on the marathon!"),
                ),
                filler[2],
                sess(
                    ("user", "I finished my second marathon, this time in Chicago."),
                    ("assistant", "Two marathons, impressive."),
                ),
            ],
            "answer_session_ids": ["m1", "m2"],
        },
        {
            "question_id": "fx_user_2_abs",
            "question_type": "single-session-user",
            "question": "What is the name of my cat?",
            "answer": "You did not mention a cat.",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["a1", "a2"],
            "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00"],
            "haystack_sessions": [filler[0], filler[1]],
            "answer_session_ids": [],
        },
    ]
    path = d / "longmemeval_oracle.json"
    path.write_text(json.dumps(items, indent=1), encoding="utf-8")
    return path


def pick_embedder(choice: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    from attestor_arango.config import load_config
    from attestor_arango.embeddings.chain import make_embedder

    return make_embedder(load_config(embedder=choice))


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default="~/.cache/longmemeval")
    ap.add_argument("--split", default="oracle", choices=sorted(FILES))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--answer", action="store_true", help="answer and judge with the LLM")
    ap.add_argument("--write-fixture", default=None, metavar="DIR")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(list(argv) if argv is not None else None)
    if args.write_fixture:
        path = write_fixture(args.write_fixture)
        print(f"wrote {path}")
        return {"fixture": str(path)}
    path = find_file(args.data, args.split)
    items: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    if args.limit:
        items = items[: args.limit]
    llm = None
    if args.answer:
        from attestor_arango.config import load_config
        from attestor_arango.llm import provider_from_settings

        llm = provider_from_settings(load_config().llm)
        if llm is None:
            raise SystemExit("--answer needs an LLM: set llm.provider in the config")
    embedder = pick_embedder(args.embedder)
    console = Console()
    with tempfile.TemporaryDirectory() as tmp, Progress(console=console) as progress:
        result = run(items, embedder, Path(tmp), progress, llm)
    table = Table(title=f"LongMemEval {args.split} ({len(items)} q) embedder={embedder.name}")
    cols = ["recall_any@5", "recall_all@5", "recall_any@10", "recall_all@10", "ndcg@10"]
    for c in ["type", "n", *cols]:
        table.add_column(c, justify="left" if c == "type" else "right")
    for name, o in [*result["per_type"].items(), ("overall", result["overall"])]:
        table.add_row(name, str(o["n_scored"]), *(f"{o[c]:.3f}" for c in cols))
    console.print(table)
    report = {
        "benchmark": "longmemeval",
        "split": args.split,
        "file": path.name,
        "embedder": embedder.name,
        "llm_in_read_path": False,
        **result,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    out = (
        Path(args.out)
        if args.out
        else RESULTS_DIR / f"longmemeval-{args.split}-{embedder.name}.json"
    )
    console.print(f"wrote {write_report(report, out)}")
    return report


if __name__ == "__main__":
    main()
