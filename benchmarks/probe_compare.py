"""Recall on a kept scale store, this checkout against another commit, fresh processes.

scale.py's probe (open, first recall, warm-up, steady recalls over the data's questions,
RSS) run on one store file by this checkout's code and by ``--compare REV`` (checked out
in a git worktree, run with PYTHONPATH there), alternating per round so both see the same
machine load; then the median over rounds of each code's figures and their ratios. The
store is only read (both codes must accept its index files as they are, or the first to
open it rewrites them: keep the format unchanged between the two).

    .venv/bin/python benchmarks/probe_compare.py --store /path/one.db \
        --data benchmarks/.cache/scale-1000000-v1 --compare REV [--rounds 3]
        [--queries 100] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import ROOT, worktree
from rich.console import Console
from scale import uptime

RATIO_KEYS = ("recall_p50_ms", "recall_p95_ms", "recall_cpu_p50_ms", "recall_cpu_p95_ms")


def probe(code: Path, store: str, data: str, queries: int) -> dict[str, Any]:
    """scale.py's probe of ``code`` in a fresh process (its own scale.py and package)."""
    cmd = [sys.executable, str(code / "benchmarks" / "scale.py"), "--probe", store]
    cmd += ["--data", data, "--queries", str(queries), "--probe-tenants", "bench"]
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=code)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True, help="a kept scale.py store (one tenant)")
    parser.add_argument("--data", required=True, help="its scale data folder")
    parser.add_argument("--compare", required=True, help="the other commit")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", default="benchmarks/results/probe-compare.json")
    args = parser.parse_args()
    console = Console()
    tree = worktree(args.compare, console)
    codes = {"this": ROOT, args.compare: tree}
    rounds: list[dict[str, Any]] = []
    try:
        for r in range(args.rounds):
            order = list(codes.items()) if r % 2 == 0 else list(codes.items())[::-1]
            for name, code in order:
                row = {"code": name, "round": r, "load": uptime()}
                row.update(probe(code, args.store, args.data, args.queries))
                console.print(row)
                rounds.append(row)
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
            check=False,
            capture_output=True,
        )
    medians = {
        name: {
            k: statistics.median(row[k] for row in rounds if row["code"] == name)
            for k in rounds[0]
            if isinstance(rounds[0][k], float)
        }
        for name in codes
    }
    this, other = medians["this"], medians[args.compare]
    report = {
        "what": f"scale.py --probe on {args.store}, {args.queries} questions, fresh processes "
        f"alternating this checkout and {args.compare} for {args.rounds} rounds",
        "command": " ".join(["benchmarks/probe_compare.py", *sys.argv[1:]]),
        "cpus": os.cpu_count(),
        "rounds": rounds,
        "medians": medians,
        "ratio_this_over_compare": {k: round(this[k] / other[k], 3) for k in RATIO_KEYS},
    }
    console.print(report["medians"], report["ratio_this_over_compare"])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
