"""Adds on a large store, two codes interleaved: the write path before and after a change.

``--build N`` writes a base store of the first N rows of scale.py's corpus (1M rows) in
bulk (as scale.py does before a checkpoint: ``Store.insert_memory`` in transactions, no
index files); leave at least ``--adds`` rows of the corpus for the timed adds. A run
copies the base once per code and starts one worker process per code (latency_worker.py
with PYTHONPATH at this checkout, or at ``--compare REV`` checked out in a git
worktree); each adds the same next rows through ``AgentMemory.add`` (dedup, quota,
audit chain, its own commit), timed one by one (wall and thread CPU), in blocks of
``--block`` adds, one code then the other, so both see the same machine load. The
in-memory indexes are not loaded (as in scale.py's adds while growing). Reports p50,
p95 and p99 per code, the ratios, and ``uptime`` before and after.

    .venv/bin/python benchmarks/adds.py --build 994000 --base /work/big/base.db
    .venv/bin/python benchmarks/adds.py --base /work/big/base.db --compare REV
        [--adds 4000] [--block 100] [--folder DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import ROOT, Worker, pct, worktree
from rich.console import Console
from scale import Grower, load_data, scale_data, uptime

from attestor_arango import AgentContext


def build(base: Path, rows: int, console: Console) -> None:
    """The first ``rows`` rows of the corpus written in bulk into a new store at ``base``."""
    data = scale_data(max(rows, 1_000_000), console)
    texts, vectors, _, _ = load_data(data)
    name = json.loads((data / "meta.json").read_text())["embedder"]
    grower = Grower(base, texts, vectors, 3, name)
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    grower.bulk(ctx, 0, rows, 5000)
    grower.mem.store.persisted.written.clear()  # no index files: the adds do not load them
    grower.close()


def figures(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {
        "add_p50_ms": pct(wall, 50),
        "add_p95_ms": pct(wall, 95),
        "add_p99_ms": pct(wall, 99),
        "add_cpu_p50_ms": pct(cpu, 50),
        "add_cpu_p95_ms": pct(cpu, 95),
        "add_cpu_p99_ms": pct(cpu, 99),
    }


def run(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    base = Path(args.base)
    data = scale_data(1_000_000, console)
    codes = {"this": ROOT}
    trees = []
    if args.compare:
        trees.append(worktree(args.compare, console))
        codes[args.compare] = trees[-1]
    folder = Path(tempfile.mkdtemp(prefix="adds-", dir=args.folder))
    workers: dict[str, Worker] = {}
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in codes}
    load_before = uptime()
    try:
        for i, (name, code) in enumerate(codes.items()):
            db = folder / f"copy{i}.db"
            shutil.copyfile(base, db)
            workers[name] = Worker(code, data, db, {})
        start = {name: w.ready for name, w in workers.items()}
        count = int(
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    f"import sqlite3; print(sqlite3.connect({str(base)!r})"
                    ".execute('SELECT COUNT(*) FROM memories').fetchone()[0])",
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        corpus = int(json.loads((data / "meta.json").read_text())["texts"])
        if count + args.adds > corpus:
            raise SystemExit(
                f"the base holds {count} rows and the corpus {corpus}: build a smaller base "
                f"(--build {corpus - args.adds} or less) so {args.adds} new rows remain to add"
            )
        for hi in range(count + args.block, count + args.adds + 1, args.block):
            for name, worker in workers.items():
                out = worker.send(cmd="add", hi=hi)
                times[name][0].extend(out["add_ms"])
                times[name][1].extend(out["add_cpu_ms"])
    finally:
        for worker in workers.values():  # killed, not closed: a close would build index files
            worker.proc.kill()
            worker.proc.wait()
        shutil.rmtree(folder, ignore_errors=True)
        for tree in trees:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )
    report: dict[str, Any] = {
        "what": "AgentMemory.add of the next rows of scale.py's corpus on copies of one base "
        f"store of {count} rows (one tenant), codes interleaved in blocks of {args.block}",
        "command": " ".join(["benchmarks/adds.py", *sys.argv[1:]]),
        "base_rows": count,
        "adds_per_code": args.adds,
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "open": start,
        "codes": {name: figures(*times[name]) for name in codes},
        "load_after": uptime(),
    }
    if args.compare:
        this, other = report["codes"]["this"], report["codes"][args.compare]
        report["ratio_this_over_compare"] = {
            k: round(this[k] / other[k], 3) for k in this if other[k]
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="the base store (built by --build)")
    parser.add_argument("--build", type=int, default=None, help="rows of a new base store")
    parser.add_argument("--compare", default=None, help="another commit to run alongside")
    parser.add_argument("--adds", type=int, default=4000, help="adds timed per code")
    parser.add_argument("--block", type=int, default=100, help="adds per turn of a code")
    parser.add_argument("--folder", default=None, help="where the copies go (default: temp)")
    parser.add_argument("--out", default="benchmarks/results/adds.json")
    args = parser.parse_args()
    console = Console()
    if args.build:
        build(Path(args.base), args.build, console)
        return
    report = run(args, console)
    console.print(report)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
