"""Wall time of one CLI call (a fresh process each time), two checkouts interleaved.

    python benchmarks/cli_cold_start.py --before /path/to/old/checkout [--runs 7]

Runs ``--version``, ``stats``, ``list`` and ``recall`` against one embedded store with
the default embedder, alternating the checkout under test and ``--before`` (when
given) call by call, so machine load hits both alike; reports medians and the ratio,
and writes benchmarks/results/cli_cold_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (["--version"], ["stats"], ["list"], ["recall", "where does Ana live"])


def call(checkout: Path, env: dict[str, str], args: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one CLI process; CPU time is what the call
    costs, wall time adds whatever else the shared machine is doing."""
    run_env = {**env, "PYTHONPATH": str(checkout)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "attestor_arango.interfaces.cli.main", *args],
        env=run_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, help="checkout to compare against")
    parser.add_argument("--after", type=Path, default=ROOT, help="checkout under test")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/cli_cold_start.json")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="attestor-cold-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTESTOR_", "ARANGO_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: byte code cached after call 1
    env.update(ATTESTOR_PATH=str(home / "memory.db"), XDG_DATA_HOME=str(home / "xdg"))
    call(args.after, env, ["add", "Ana lives in Porto", "--entity", "Ana"])
    sides = {"after": args.after} | ({"before": args.before} if args.before else {})
    for checkout in sides.values():  # warm: byte code written, model files in the page cache
        call(checkout, env, ["recall", "warm up"])
    times: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    cpu: dict[str, dict[str, list[float]]] = {s: {} for s in sides}
    for _ in range(args.runs):
        for command in COMMANDS:
            for side, checkout in sides.items():
                wall, used = call(checkout, env, command)
                times[side].setdefault(" ".join(command), []).append(wall)
                cpu[side].setdefault(" ".join(command), []).append(used)
    result: dict[str, object] = {
        "benchmark": "cli_cold_start",
        "machine": f"{platform.machine()} {os.cpu_count()} cpus (shared, loaded)",
        "python": platform.python_version(),
        "runs": args.runs,
        "median_wall_s": {
            s: {c: statistics.median(v) for c, v in t.items()} for s, t in times.items()
        },
        "median_cpu_s": {
            s: {c: statistics.median(v) for c, v in t.items()} for s, t in cpu.items()
        },
    }
    if args.before:
        result["cpu_ratio_after_over_before"] = {
            c: statistics.median(cpu["after"][c]) / statistics.median(cpu["before"][c])
            for c in cpu["after"]
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
