"""Today's recall latency projected onto the machine issue #21 was measured on.

Issue #21 measured recall at 1k / 10k / 100k memories on its writer's machine, with the
code of its time (6b1b05c, the code the session that took the issue started from: before
the layout, the persisted indexes and every speed change made for the issue): 6.8 / 9.6 ms
p50 / p95 at 1k. Its targets (p50 <= 2 ms at 1k, <= 4 ms at 10k) are on that machine. The
machines the team measures on are slower and shared, so their milliseconds cannot be held
against the targets. Ratios can: run the issue-time code and today's on the same data in
the same run, interleaved query by query (``latency.py --compare``), many runs back to
back, and carry the median ratio over to the issue's figures:

    projected p50 = issue p50 x median over runs of (today p50 / issue-time p50)

likewise p95. A second projection takes the ratio of instructions per recall
(``instructions.py --compare``, which load does not move); it assumes both codes run at
the same instructions per second on the issue's machine, as they nearly do here.

Both assume the two codes slow down alike from one machine to the other. At 1k a recall
is interpreter work (a 1k x 384 scan is a few microseconds), so that holds better there
than at 100k, where memory bandwidth weighs more.

    .venv/bin/python benchmarks/projection.py --runs 13 [--compare 6b1b05c] [--this REV]
        [--sizes 1000] [--folder DIR] [--instructions FILE] [--out FILE]
        [any other latency.py option, e.g. --queries 200]

``--runs 0`` only summarises the latency.py reports already in ``--folder``.
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

ROOT = Path(__file__).resolve().parents[1]
LATENCY = Path(__file__).resolve().parent / "latency.py"
ISSUE_TIME = "6b1b05c"
QUIET = 1.1

# issue #21's own figures (ms, its machine, code of its time) and its targets
ISSUE: dict[int, dict[str, float]] = {
    1000: {"p50": 6.8, "p95": 9.6, "target_p50": 2.0},
    10_000: {"p50": 8.6, "p95": 11.6, "target_p50": 4.0},
    100_000: {"p50": 11.7, "p95": 15.8, "target_p95": 10.0},
}


SPREAD = (
    "this_p50_ms",
    "old_p50_ms",
    "this_p95_ms",
    "old_p95_ms",
    "p50_ratio",
    "p95_ratio",
    "this_cpu_p50_ms",
    "old_cpu_p50_ms",
    "cpu_p50_ratio",
    "cpu_paired_ratio",
    "this_wall_over_cpu",
    "old_wall_over_cpu",
)


def run_series(runs: int, folder: Path, latency_args: list[str]) -> None:
    """``runs`` latency.py runs back to back, each report kept as ``folder/run-NN.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    start = len(list(folder.glob("run-*.json")))
    for i in range(start, start + runs):
        out = folder / f"run-{i:02d}.json"
        done = subprocess.run(
            [sys.executable, str(LATENCY), *latency_args, "--out", str(out)],
            cwd=str(ROOT),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"latency.py failed: {done.stderr[-2000:]}")
        print(f"run {i}: {out} (load {os.getloadavg()[0]:.2f})", flush=True)


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def summarise(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Per size: each run's ratios (this / the compared code), their medians and ranges,
    the load, and the issue's figures carried over by the median ratios."""
    old = {r["compare"] for r in reports}
    if len(old) != 1 or None in old:
        raise ValueError(
            f"reports must all compare with one other code, got {sorted(map(str, old))}"
        )
    rev = old.pop()
    by_size: dict[int, list[dict[str, Any]]] = {}
    loads: list[float] = []
    for report in reports:
        load = [report["load_average_before"][0], report["load_average_after"][0]]
        loads += load
        for rows in report["results"]:
            this, other = rows["this"], rows[rev]
            by_size.setdefault(this["memories"], []).append(
                {
                    "this_p50_ms": this["recall_p50_ms"],
                    "old_p50_ms": other["recall_p50_ms"],
                    "this_p95_ms": this["recall_p95_ms"],
                    "old_p95_ms": other["recall_p95_ms"],
                    "p50_ratio": this["recall_p50_ms"] / other["recall_p50_ms"],
                    "p95_ratio": this["recall_p95_ms"] / other["recall_p95_ms"],
                    "this_cpu_p50_ms": this["recall_cpu_p50_ms"],
                    "old_cpu_p50_ms": other["recall_cpu_p50_ms"],
                    "cpu_p50_ratio": this["recall_cpu_p50_ms"] / other["recall_cpu_p50_ms"],
                    # wall over CPU: above 1 the process waited for a core (a loaded machine)
                    "this_wall_over_cpu": this["recall_p50_ms"] / this["recall_cpu_p50_ms"],
                    "old_wall_over_cpu": other["recall_p50_ms"] / other["recall_cpu_p50_ms"],
                    "cpu_paired_ratio": this["recall_cpu_paired_ratio"],
                    "results": [this["results_per_recall"], other["results_per_recall"]],
                    "load_1min_before_after": load,
                }
            )
    sizes: dict[str, Any] = {}
    for size, runs in sorted(by_size.items()):
        entry: dict[str, Any] = {"runs": len(runs)}
        for key in SPREAD:
            entry[key] = _spread([r[key] for r in runs])
        # runs in which neither side waited for a core (wall p50 within 10% of CPU p50): on a
        # loaded machine the longer recalls wait more, which flatters the faster code
        quiet = [r for r in runs if max(r["this_wall_over_cpu"], r["old_wall_over_cpu"]) <= QUIET]
        entry["quiet_runs"] = len(quiet)
        if quiet:
            entry["quiet_p50_ratio"] = _spread([r["p50_ratio"] for r in quiet])
            entry["quiet_p95_ratio"] = _spread([r["p95_ratio"] for r in quiet])
        entry["results_per_recall"] = {"this": runs[0]["results"][0], rev: runs[0]["results"][1]}
        if size in ISSUE:
            issue = ISSUE[size]
            entry["issue"] = issue
            entry["projected_p50_ms"] = round(issue["p50"] * entry["p50_ratio"]["median"], 2)
            entry["projected_p95_ms"] = round(issue["p95"] * entry["p95_ratio"]["median"], 2)
            cpu = entry["cpu_paired_ratio"]["median"]
            entry["projected_p50_ms_by_cpu_ratio"] = round(issue["p50"] * cpu, 2)
            if quiet:
                ratio = entry["quiet_p50_ratio"]["median"]
                entry["projected_p50_ms_quiet_runs"] = round(issue["p50"] * ratio, 2)
                ratio = entry["quiet_p95_ratio"]["median"]
                entry["projected_p95_ms_quiet_runs"] = round(issue["p95"] * ratio, 2)
        entry["per_run"] = runs
        sizes[str(size)] = entry
    return {"compare": rev, "load_average_1min": _spread(loads), "sizes": sizes}


def by_instructions(report: dict[str, Any], rev: str) -> dict[str, Any]:
    """The issue's p50/p95 carried over by the ratio of instructions per recall."""
    codes = report["codes"]
    ratio = codes["this"]["instructions_m"] / codes[rev]["instructions_m"]
    out: dict[str, Any] = {
        "size": report["size"],
        "this_m": codes["this"]["instructions_m"],
        "old_m": codes[rev]["instructions_m"],
        "ratio": round(ratio, 4),
    }
    if report["size"] in ISSUE:
        issue = ISSUE[report["size"]]
        out["projected_p50_ms"] = round(issue["p50"] * ratio, 2)
        out["projected_p95_ms"] = round(issue["p95"] * ratio, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=13)
    parser.add_argument("--compare", default=ISSUE_TIME)
    parser.add_argument("--sizes", nargs="+", default=["1000"])
    parser.add_argument("--folder", default="benchmarks/results/projection-runs")
    parser.add_argument("--instructions", default=None, help="an instructions.py --compare JSON")
    parser.add_argument("--out", default="benchmarks/results/projection.json")
    args, rest = parser.parse_known_args()
    folder = Path(args.folder)
    latency_args = ["--sizes", *args.sizes, "--rounds", "1", "--compare", args.compare, *rest]
    run_series(args.runs, folder, latency_args)
    reports = [json.loads(p.read_text()) for p in sorted(folder.glob("run-*.json"))]
    summary = summarise(reports)
    if args.instructions:
        report = json.loads(Path(args.instructions).read_text())
        summary["instructions"] = by_instructions(report, summary["compare"])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2))
    for size, entry in summary["sizes"].items():
        shown = {k: v for k, v in entry.items() if k != "per_run"}
        print(size, json.dumps(shown))
    if "instructions" in summary:
        print("instructions", json.dumps(summary["instructions"]))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
