"""Instructions per recall, counted by valgrind's callgrind: a speed figure load does not move.

Wall time on a shared machine drifts between runs (session 28: recall p50 2.5-4.1 ms at 1k
for the same code, run after run); callgrind counts the instructions a recall executes,
the same for the same code and inputs whatever else the machine does. For each code under
test (this checkout and every ``--compare`` commit, checked out in a git worktree and
compiled first, so no ``.pyc`` write is counted) a store of ``--size`` memories is built
as ``latency.py`` builds it (real LoCoMo turns and questions, MiniLM vectors cached under
benchmarks/.cache, the same clock and ids), then two processes run 50 and 250 recalls of
a copy of it under callgrind: ``(Ir(250) - Ir(50)) / 200`` is one recall, start-up excluded.
Each process also hashes the ranking of its recalls (ids, scores, tokens in order): equal
hashes, equal rankings. That hashing is counted too (~0.9M a recall at 1k, about 85
results), the same for every code measured: compare figures of one harness only.

    .venv/bin/python benchmarks/instructions.py [--size 1000] [--compare REV ...] [--out FILE]

Needs ``valgrind`` (Debian's package); a run at 1k takes about 90 s a code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

import latency

RUNS = (50, 250)


def child(data: Path, db: Path, n: int) -> None:
    """The measured process: ``n`` recalls of the store at ``db`` (questions in turn, the
    benchmark's fixed ``as_of``); prints the hash of their rankings."""
    import latency_worker as lw
    import numpy as np

    from attestor_arango import AgentContext
    from attestor_arango.clock import ManualClock, from_us
    from attestor_arango.ids import SeededIdSource
    from attestor_arango.memory import AgentMemory

    meta = json.loads((data / "meta.json").read_text())
    texts = json.loads((data / "texts.json").read_text())
    questions = json.loads((data / "questions.json").read_text())
    vectors = np.load(data / "vectors.npy", mmap_mode="r")
    embedder = lw.CachedVectors(meta["embedder"], texts + questions, vectors)
    clock = ManualClock(lw.START)
    mem = AgentMemory(str(db), embedder=embedder, clock=clock, ids=SeededIdSource(7))
    ctx = AgentContext(agent_id="bench", tenant="bench", namespace="n")
    clock.set(lw.AS_OF + lw.STEP)
    digest = hashlib.sha256()
    for i in range(n):
        response = mem.recall(questions[i % len(questions)], context=ctx, as_of=from_us(lw.AS_OF))
        ranked = "|".join(f"{r.memory.id}:{r.score!r}:{r.tokens}" for r in response.results)
        digest.update(ranked.encode() + b"\n")
    mem.close()
    print(digest.hexdigest()[:16])


def build(code: Path, data: Path, db: Path, size: int) -> None:
    """The store of ``size`` memories, grown and closed by ``code``'s own worker."""
    worker = latency.Worker(code, data, db, {})
    worker.send(cmd="add", hi=size)
    worker.close()


def counted(code: Path, data: Path, store: Path, n: int, tmp: Path) -> tuple[int, str]:
    """Instructions of one process running ``n`` recalls on a copy of ``store``, and the
    hash of their rankings."""
    copy = tmp / f"copy-{n}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store.parent, copy)
    out = tmp / f"callgrind-{n}.out"
    env = {**os.environ, "PYTHONPATH": str(code), "PYTHONHASHSEED": "0"}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    args = [str(data), str(copy / store.name), str(n)]
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable]
    ran = subprocess.run(
        [*cmd, __file__, "--child", *args], env=env, cwd=str(code), capture_output=True, text=True
    )
    if ran.returncode != 0:
        raise RuntimeError(f"callgrind run failed: {ran.stderr[-2000:]}")
    total = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if total is None:
        raise RuntimeError(f"no instruction total in {out}")
    return int(total.group(1)), ran.stdout.strip().splitlines()[-1]


def measure(code: Path, data: Path, size: int, console: Console) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        store = tmp / "store" / "bench.db"
        store.parent.mkdir()
        build(code, data, store, size)
        (low, low_hash), (high, high_hash) = (counted(code, data, store, n, tmp) for n in RUNS)
    per_recall = (high - low) / (RUNS[1] - RUNS[0])
    console.print(f"{code}: {per_recall / 1e6:.3f}M instructions a recall")
    return {"instructions_m": round(per_recall / 1e6, 3), "ranking_hashes": [low_hash, high_hash]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--compare", nargs="*", default=[], help="other commits to count")
    parser.add_argument("--out", default="benchmarks/results/instructions.json")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        data, db, n = args.child
        child(Path(data), Path(db), int(n))
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed: apt-get install -y valgrind")
    console = Console()
    data = latency.prepare("locomo", args.size, 200, console)
    codes = {"this": latency.ROOT}
    trees = [latency.worktree(rev, console) for rev in args.compare]
    codes.update(zip(args.compare, trees, strict=True))
    try:
        for code in codes.values():
            folders = [str(code / "attestor_arango"), str(code / "benchmarks")]
            subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=True)
        rows = {label: measure(code, data, args.size, console) for label, code in codes.items()}
    finally:
        for tree in trees:
            subprocess.run(
                ["git", "-C", str(latency.ROOT), "worktree", "remove", "--force", str(tree)],
                check=False,
                capture_output=True,
            )
    table = Table(title=f"instructions a recall, {args.size:,} memories")
    for column in ("code", "M instructions", "ratio to this", "ranking hashes (50, 250)"):
        table.add_column(column)
    base = rows["this"]["instructions_m"]
    for label, row in rows.items():
        ratio = f"{row['instructions_m'] / base:.3f}"
        table.add_row(label, f"{row['instructions_m']:.3f}", ratio, " ".join(row["ranking_hashes"]))
    console.print(table)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"size": args.size, "codes": rows}, indent=2))
    console.print(f"wrote {out}")


if __name__ == "__main__":
    main()
