"""Load on the REST service: N concurrent clients on loopback mixing add and recall.

Starts `attestor-arango api` as its own process (embedded store in a temp dir,
hashing embedder, one API key), seeds it, then runs N client threads, each with
its own keep-alive MemoryClient, for a bounded time. Each client draws add or
recall with a seeded RNG. Reports throughput, p50/p95/p99/max latency per
operation and the error count (target: 0), as a rich table and as JSON.

    .venv/bin/python benchmarks/load.py [--clients 8] [--seconds 15] [--add-ratio 0.3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rich.console import Console
from rich.table import Table

from attestor_arango.context import AgentContext
from attestor_arango.errors import StoreError
from attestor_arango.interfaces.api.auth import hash_key
from attestor_arango.interfaces.client import MemoryClient

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
]
ENTITIES = [f"project-{i}" for i in range(40)]
KEY = "load-benchmark-key"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))


def start_server(home: Path, port: int, clients: int, workers: int) -> subprocess.Popen[str]:
    keys = home / "keys.yaml"
    entry = {
        "id": "load",
        "sha256": hash_key(KEY),
        "tenant": "bench",
        "roles": ["executor"],
        "agent_ids": [f"load-{i}" for i in range(clients)] + ["seeder"],
    }
    keys.write_text(yaml.safe_dump({"keys": [entry]}), encoding="utf-8")
    env = dict(os.environ)
    env.update(
        PYTHONPATH=str(ROOT),
        ATTESTOR_PATH=str(home / "load.db"),
        ATTESTOR_EMBEDDER="hashing",
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "attestor_arango.interfaces.cli.main",
            "api",
            "--port",
            str(port),
            "--keys",
            str(keys),
            "--log-level",
            "warning",
            "--workers",
            str(workers),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    with MemoryClient(url, KEY, timeout=5) as c:
        while True:
            try:
                c.health()
                return
            except StoreError as exc:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"server did not start: {proc.stderr.read() if proc.stderr else ''}"
                    ) from exc
                time.sleep(0.2)


def client_loop(
    index: int, url: str, stop_at: float, add_ratio: float, seed: int, out: dict[str, Any]
) -> None:
    rng = random.Random(seed * 1000 + index)
    ctx = AgentContext(agent_id=f"load-{index}", role="executor", tenant="bench")
    lat: dict[str, list[float]] = {"add": [], "recall": []}
    errors: Counter[str] = Counter()
    with MemoryClient(url, KEY, context=ctx, timeout=30) as c:
        while time.monotonic() < stop_at:
            op = "add" if rng.random() < add_ratio else "recall"
            start = time.perf_counter()
            try:
                if op == "add":
                    c.add(sentence(rng), entity=rng.choice(ENTITIES), category="note")
                else:
                    c.recall(" ".join(rng.choice(WORDS) for _ in range(3)), token_budget=2000)
            except Exception as exc:
                errors[f"{op}:{type(exc).__name__}"] += 1
                continue
            lat[op].append(time.perf_counter() - start)
    out[index] = {"lat": lat, "errors": errors}


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "max_ms": None}
    arr = np.asarray(values) * 1000
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 2),
        "p95_ms": round(float(np.percentile(arr, 95)), 2),
        "p99_ms": round(float(np.percentile(arr, 99)), 2),
        "max_ms": round(float(arr.max()), 2),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    console = Console()
    with tempfile.TemporaryDirectory(prefix="attestor-load-") as tmp:
        home = Path(tmp)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(home, port, args.clients, args.workers)
        try:
            wait_ready(url, proc)
            rng = random.Random(args.seed)
            seeder = AgentContext(agent_id="seeder", role="executor", tenant="bench")
            with MemoryClient(url, KEY, context=seeder) as c:
                for _ in range(args.seed_memories):
                    c.add(sentence(rng), entity=rng.choice(ENTITIES), category="seed")
            console.print(
                f"seeded {args.seed_memories} memories; {args.clients} clients for "
                f"{args.seconds}s, add ratio {args.add_ratio}"
            )
            results: dict[str, Any] = {}
            stop_at = time.monotonic() + args.seconds
            threads = [
                threading.Thread(
                    target=client_loop,
                    args=(i, url, stop_at, args.add_ratio, args.seed, results),
                )
                for i in range(args.clients)
            ]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - started
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
    lat: dict[str, list[float]] = {"add": [], "recall": []}
    errors: Counter[str] = Counter()
    for r in results.values():
        for op in lat:
            lat[op].extend(r["lat"][op])
        errors.update(r["errors"])
    rows = {}
    for op in ("add", "recall"):
        rows[op] = {
            "count": len(lat[op]),
            "per_s": round(len(lat[op]) / elapsed, 1),
            **percentiles(lat[op]),
        }
    every = lat["add"] + lat["recall"]
    rows["all"] = {
        "count": len(every),
        "per_s": round(len(every) / elapsed, 1),
        **percentiles(every),
    }
    report = {
        "benchmark": "rest_load",
        "clients": args.clients,
        "seconds": round(elapsed, 2),
        "add_ratio": args.add_ratio,
        "seed_memories": args.seed_memories,
        "server_workers": args.workers,
        "embedder": "hashing-v1-384",
        "backend": "embedded",
        "operations": rows,
        "errors": sum(errors.values()),
        "error_kinds": dict(errors),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    }
    table = Table(title=f"REST load: {args.clients} clients, {elapsed:.1f}s, loopback")
    for column in ("op", "count", "req/s", "p50 ms", "p95 ms", "p99 ms", "max ms"):
        table.add_column(column, justify="right")
    for op, row in rows.items():
        table.add_row(
            op,
            str(row["count"]),
            str(row["per_s"]),
            str(row["p50_ms"]),
            str(row["p95_ms"]),
            str(row["p99_ms"]),
            str(row["max_ms"]),
        )
    console.print(table)
    colour = "green" if report["errors"] == 0 else "red"
    console.print(f"[{colour}]errors: {report['errors']}[/] {dict(errors) or ''}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--add-ratio", type=float, default=0.3)
    parser.add_argument("--seed-memories", type=int, default=300)
    parser.add_argument("--workers", type=int, default=8, help="server's concurrent memory calls")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(RESULTS / "load.json"))
    args = parser.parse_args()
    report = run(args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    Console().print(f"wrote {out}")
    return 0 if report["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
