"""Knowledge-update suite: does the newer of two contradicting facts rank first?

    python benchmarks/knowledge_updates/run.py [--embedder local|hashing] [--out FILE]

For each case of ``cases.json``, in a fresh memory: four unrelated facts and the
old fact are stored in an early session, the contradicting new fact in a later
session, then the question is recalled at ``asked_at``. Everything goes through
``add()`` with text only (no entity, no category), so no rule-based
supersession fires and the ranking itself has to prefer the newer fact.
Outcome per case: ``new_wins`` (the new fact is the top result), ``stale_wins``
(the old one is) or ``miss`` (something else is). Reported per category; the
target is 100 % new_wins.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from attestor_arango.clock import ManualClock, parse_time  # noqa: E402
from attestor_arango.embeddings import Embedder, HashingEmbedder  # noqa: E402
from attestor_arango.ids import SeededIdSource  # noqa: E402
from attestor_arango.memory import AgentMemory  # noqa: E402
from attestor_arango.retrieval import RetrievalConfig  # noqa: E402

RESULTS_DIR = HERE.parent / "results"


def load_cases(path: Path = HERE / "cases.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def run_case(
    case: dict[str, Any],
    index: int,
    suite: dict[str, Any],
    embedder: Embedder,
    config: RetrievalConfig,
    workdir: Path,
) -> dict[str, Any]:
    old_at = parse_time(suite["old_session"])
    new_at = parse_time(suite["new_session"])
    asked = parse_time(suite["asked_at"])
    pool: list[str] = suite["distractors"]
    per = int(suite["distractors_per_case"])
    picked = [pool[(index * per + j) % len(pool)] for j in range(per)]
    clock = ManualClock(old_at)
    with AgentMemory(
        workdir / f"{case['id']}.db", embedder=embedder, clock=clock, ids=SeededIdSource(index)
    ) as mem:
        mem.retrieval_config = config
        half = per // 2
        for text in [*picked[:half], case["old"], *picked[half:]]:
            mem.add(text, valid_from=clock.now_us() / 1e6)
            clock.advance(seconds=60)
        clock.set(new_at)
        new = mem.add(case["new"], valid_from=new_at / 1e6)
        clock.set(asked)
        resp = mem.recall(case["question"])
    ranked = [r.memory.content for r in resp.results]
    top = ranked[0] if ranked else None
    outcome = "new_wins" if top == new.content else "stale_wins" if top == case["old"] else "miss"
    return {
        "id": case["id"],
        "category": case["category"],
        "outcome": outcome,
        "new_rank": ranked.index(case["new"]) + 1 if case["new"] in ranked else None,
        "old_rank": ranked.index(case["old"]) + 1 if case["old"] in ranked else None,
        "top": top,
    }


def pick_embedder(choice: str) -> Embedder:
    if choice == "hashing":
        return HashingEmbedder()
    from attestor_arango.config import load_config
    from attestor_arango.embeddings.chain import make_embedder

    return make_embedder(load_config(embedder=choice))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--retrieval", default="{}", help="JSON overrides of RetrievalConfig")
    ap.add_argument("--cases", default=str(HERE / "cases.json"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    suite = load_cases(Path(args.cases))
    embedder = pick_embedder(args.embedder)
    config = RetrievalConfig.from_dict(json.loads(args.retrieval))
    console = Console()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, Progress(console=console) as progress:
        task = progress.add_task("knowledge updates", total=len(suite["cases"]))
        for i, case in enumerate(suite["cases"]):
            rows.append(run_case(case, i, suite, embedder, config, Path(tmp)))
            progress.advance(task)
    cats = sorted({r["category"] for r in rows}, key=[c["category"] for c in suite["cases"]].index)
    per_cat: dict[str, dict[str, Any]] = {}
    table = Table(title=f"knowledge updates, embedder={embedder.name}")
    for col in ("category", "n", "new_wins", "stale_wins", "miss", "new_wins %"):
        table.add_column(col, justify="left" if col == "category" else "right")
    for cat in [*cats, "overall"]:
        sub = [r for r in rows if cat in ("overall", r["category"])]
        c = Counter(r["outcome"] for r in sub)
        per_cat[cat] = {
            "n": len(sub),
            "new_wins": c["new_wins"],
            "stale_wins": c["stale_wins"],
            "miss": c["miss"],
            "new_wins_rate": round(c["new_wins"] / len(sub), 4),
        }
        p = per_cat[cat]
        table.add_row(
            cat,
            str(p["n"]),
            str(p["new_wins"]),
            str(p["stale_wins"]),
            str(p["miss"]),
            f"{100 * p['new_wins_rate']:.1f}",
        )
    console.print(table)
    report = {
        "benchmark": "knowledge_updates",
        "embedder": embedder.name,
        "config": config.to_dict(),
        "per_category": per_cat,
        "cases": rows,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    out = Path(args.out) if args.out else RESULTS_DIR / f"knowledge_updates-{embedder.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    console.print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
