"""Recall on a store an ingested conversation filled with entities and relations.

latency.py's stores are plain adds: they hold no entity and no relation, so what a
recall pays for the graph step does not show there. Here one user ("Caroline") tells
``--rounds`` rounds of facts through ``ingest_round`` (rules extractor, hashing
embedder: building stays minutes, not hours): what she likes, where she moved, her
friends and where they live, so the store gets a hub entity with hundreds of
relations and a thousand or more other entities. The store is built once (by this
checkout's code) and copied for each code under test; each code runs in its own
process (PYTHONPATH at this checkout, or at ``--compare REV`` checked out in a git
worktree), the codes take turns query by query, and each recall's wall and thread CPU
time are recorded, for three kinds of question: naming the hub entity, naming a friend,
naming no entity. Reports p50/p95 per code and kind, the median paired CPU ratio, and a
hash of every answer per code (equal when both codes rank alike).

    .venv/bin/python benchmarks/entities.py [--rounds 40] [--queries 60]
        [--compare REV] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import ROOT, pct, worktree
from rich.console import Console
from rich.table import Table

T0 = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z
FOODS = ["sushi", "ramen", "tacos", "pho", "paella", "curry", "falafel", "dumplings", "risotto"]
CITIES = ["Oslo", "Leeds", "Porto", "Lyon", "Graz", "Turku", "Cork", "Ghent", "Brno", "Split"]
FIRST = ["Bob", "Ana", "Kenji", "Maria", "Omar", "Lena", "Ravi", "Sofia", "Tomas", "Yara"]
LAST = ["Stone", "Berg", "Okafor", "Silva", "Novak", "Haddad", "Kim", "Moreau", "Quill", "Ito"]


def _friend(rng: random.Random, r: int, i: int) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}{r}x{i}"


def _round_text(rng: random.Random, r: int, facts: int) -> tuple[str, list[str]]:
    """One round of the user's facts, and the friends it names."""
    out, friends = [], []
    for i in range(facts):
        kind = i % 3
        if kind == 0:
            out.append(f"I like {rng.choice(FOODS)} from {rng.choice(CITIES)} {r}x{i}.")
        elif kind == 1:
            friend = _friend(rng, r, i)
            friends.append(friend)
            out.append(f"My friend {friend} lives in {rng.choice(CITIES)}.")
        else:
            out.append(f"I visited {rng.choice(CITIES)} with {_friend(rng, r, i)} last week.")
    return " ".join(out), friends


def build(db: Path, rounds: int, facts: int) -> dict[str, Any]:
    from attestor_arango import AgentContext, AgentMemory
    from attestor_arango.clock import ManualClock
    from attestor_arango.embeddings import HashingEmbedder
    from attestor_arango.ids import SeededIdSource

    rng = random.Random(21)
    clock = ManualClock(T0)
    mem = AgentMemory(db, embedder=HashingEmbedder(), clock=clock, ids=SeededIdSource(21))
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    friends: list[str] = []
    for r in range(rounds):
        clock.advance(seconds=60)
        text, named = _round_text(rng, r, facts)
        friends += named
        mem.ingest_round({"user": text, "user_name": "Caroline"}, context=ctx)
    counts = mem.store.count_rows(ctx.scope)
    mem.close()
    return {"friends": friends, "counts": counts}


def questions(friends: list[str], n: int) -> list[tuple[str, str]]:
    rng = random.Random(22)
    out = []
    for i in range(n):
        out.append(("hub", f"What does Caroline like to eat in {rng.choice(CITIES)}?"))
        out.append(("friend", f"Where does {rng.choice(friends)} live?"))
        out.append(("none", f"Which city had the best {rng.choice(FOODS)} {i}?"))
    return out


def serve(db: Path) -> None:
    """Worker: opens a copy of ``db``, answers {"q": text} with its recall's times."""
    from attestor_arango import AgentContext, AgentMemory
    from attestor_arango.clock import ManualClock
    from attestor_arango.core.blas import limit_blas_threads
    from attestor_arango.embeddings import HashingEmbedder

    limit_blas_threads()  # what the CLI and servers do: one BLAS thread (core/blas.py)
    mem = AgentMemory(db, embedder=HashingEmbedder(), clock=ManualClock(T0 + 10**12))
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        q = json.loads(line)["q"]
        wall, cpu = time.perf_counter(), time.thread_time()
        resp = mem.recall(q, context=ctx)
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        out = {"wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3, "entities": list(resp.query_entities)}
        out["results"] = len(resp.results)
        out["digest"] = hashlib.sha256(resp.model_dump_json().encode()).hexdigest()
        print(json.dumps(out), flush=True)


class _Worker:
    def __init__(self, code: Path, db: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(code), "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(code),
        )
        self.ask(None)

    def ask(self, q: str | None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if q is not None:
            self.proc.stdin.write(json.dumps({"q": q}) + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"worker exited with {self.proc.wait()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--facts", type=int, default=30, help="facts a round")
    parser.add_argument("--queries", type=int, default=60, help="questions of each kind")
    parser.add_argument("--compare", help="another commit to run on the same store")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    console = Console()
    folder = Path(tempfile.mkdtemp(prefix="entities-bench-"))
    started = time.perf_counter()
    built = build(folder / "base.db", args.rounds, args.facts)
    console.print(f"built in {time.perf_counter() - started:.0f} s: {built['counts']}")
    codes = {"this": ROOT}
    if args.compare:
        codes["compare"] = worktree(args.compare, console)
    workers = {}
    for label, code in codes.items():
        db = folder / f"{label}.db"
        shutil.copy(folder / "base.db", db)
        workers[label] = _Worker(code, db)
    asked = questions(built["friends"], args.queries)
    times: dict[str, dict[str, list[dict[str, Any]]]] = {c: {} for c in codes}
    for _ in range(3):  # warm-up: first recalls read the indexes
        for w in workers.values():
            w.ask(asked[0][1])
    for kind, q in asked:
        for label in codes:
            times[label].setdefault(kind, []).append(workers[label].ask(q))
    for w in workers.values():
        w.close()
    table = Table(title=f"recall on an ingested store: {built['counts']}")
    for col in ("code", "question", "p50 ms", "p95 ms", "cpu p50 ms", "entities named"):
        table.add_column(col)
    report: dict[str, Any] = {"counts": built["counts"], "codes": {}, "ratios": {}}
    for label in codes:  # every answer, in order: two codes that rank alike agree
        joined = "".join(r["digest"] for rows in times[label].values() for r in rows)
        digest = hashlib.sha256(joined.encode()).hexdigest()[:16]
        report.setdefault("answers_hash", {})[label] = digest
    console.print(f"answers hash: {report['answers_hash']}")
    for label in codes:
        for kind, rows in times[label].items():
            wall, cpu = [r["wall_ms"] for r in rows], [r["cpu_ms"] for r in rows]
            named = statistics.mean(len(r["entities"]) for r in rows)
            fig = {"p50_ms": pct(wall, 50), "p95_ms": pct(wall, 95), "cpu_p50_ms": pct(cpu, 50)}
            report["codes"].setdefault(label, {})[kind] = {**fig, "entities_named": named}
            table.add_row(label, kind, *(f"{v:.2f}" for v in fig.values()), f"{named:.2f}")
    if "compare" in codes:
        for kind in times["this"]:
            pairs = zip(times["this"][kind], times["compare"][kind], strict=True)
            ratio = statistics.median(a["cpu_ms"] / b["cpu_ms"] for a, b in pairs)
            report["ratios"][kind] = round(ratio, 3)
        console.print(f"median paired CPU ratio this/compare: {report['ratios']}")
    console.print(table)
    report["load"] = os.getloadavg()
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
