"""Embedding throughput of every embedder available on this machine.

    python benchmarks/embedders.py [--texts 512] [--batch 32] [--repeats 3]

Prints a table and writes JSON to benchmarks/results/embedders-<utc stamp>.json.
Which embedders run: hashing always; the local MiniLM when the ``local`` extra is
installed; Ollama when a server with the configured model answers (unless
ATTESTOR_DISABLE_LOCAL_EMBED=1); the OpenAI-compatible endpoint when
openai_base_url is configured. Timings are wall clock of whole embed() calls;
this is a measurement, not a test, so nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attestor_arango.config import Config, load_config
from attestor_arango.embeddings import (
    Embedder,
    HashingEmbedder,
    LocalMiniLMEmbedder,
    OllamaEmbedder,
    OpenAICompatEmbedder,
    local_available,
)
from attestor_arango.embeddings.chain import ENV_DISABLE_OLLAMA_PROBE, ollama_has_model
from attestor_arango.embeddings.ollama import DEFAULT_OLLAMA_MODEL
from attestor_arango.embeddings.openai import DEFAULT_OPENAI_MODEL

RESULTS = Path(__file__).resolve().parent / "results"

_SUBJECTS = ["Alice", "the billing service", "our Berlin office", "Bob", "the nightly job", "Dana"]
_VERBS = ["moved to", "prefers", "depends on", "was replaced by", "reported", "scheduled"]
_OBJECTS = [
    "a new data centre in Frankfurt",
    "dark mode in every editor",
    "the Postgres 16 cluster",
    "a quarterly review with the finance team",
    "an outage caused by an expired certificate",
    "weekly one-to-one meetings on Thursdays",
]


def corpus(n: int, seed: int = 7) -> list[str]:
    """Memory-like sentences of mixed length, the same for every run with the same seed."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        parts = [
            f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}"
            for _ in range(rng.randint(1, 4))
        ]
        texts.append("; ".join(parts) + ".")
    return texts


def candidates(config: Config) -> list[tuple[str, Callable[[], Embedder]]]:
    found: list[tuple[str, Callable[[], Embedder]]] = [("hashing", HashingEmbedder)]
    if local_available(config.local_model_path):
        found.append(("local", lambda: LocalMiniLMEmbedder(config.local_model_path)))
    model = config.embedder_model or DEFAULT_OLLAMA_MODEL
    if os.environ.get(ENV_DISABLE_OLLAMA_PROBE) != "1" and ollama_has_model(
        config.ollama_url, model
    ):
        found.append(("ollama", lambda: OllamaEmbedder(model, base_url=config.ollama_url)))
    if config.openai_base_url:
        key = config.openai_api_key.get_secret_value() if config.openai_api_key else None
        base = config.openai_base_url
        omodel = config.embedder_model or DEFAULT_OPENAI_MODEL
        found.append(("openai", lambda: OpenAICompatEmbedder(base, model=omodel, api_key=key)))
    return found


def measure(emb: Embedder, texts: list[str], batch: int, repeats: int) -> dict[str, Any]:
    emb.embed(texts[:batch])  # warm-up: lazy loads, first-call allocations, server model load
    runs, cpu_runs = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        for i in range(0, len(texts), batch):
            emb.embed(texts[i : i + batch])
        runs.append(time.perf_counter() - start)
        cpu_runs.append(time.process_time() - cpu_start)
    singles = []
    for text in texts[:50]:
        start = time.perf_counter()
        emb.embed([text])
        singles.append((time.perf_counter() - start) * 1000)
    best = min(runs)
    return {
        "texts": len(texts),
        "batch": batch,
        "repeats": repeats,
        "seconds_best": round(best, 4),
        "seconds_median": round(statistics.median(runs), 4),
        "texts_per_s": round(len(texts) / best, 1),
        # CPU seconds of this process (all threads): steadier than wall time on a shared
        # machine; meaningless for remote providers, whose work happens in the server
        "texts_per_cpu_s": round(len(texts) / max(min(cpu_runs), 1e-9), 1),
        "single_ms_p50": round(statistics.median(singles), 3),
        "single_ms_p95": round(sorted(singles)[int(0.95 * (len(singles) - 1))], 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    config = load_config()
    texts = corpus(args.texts)
    console = Console()
    rows: list[dict[str, Any]] = []
    for label, build in candidates(config):
        try:
            start = time.perf_counter()
            emb = build()
            load_s = time.perf_counter() - start
            result = measure(emb, texts, args.batch, args.repeats)
        except Exception as exc:  # one broken provider must not hide the others' figures
            rows.append({"provider": label, "error": f"{type(exc).__name__}: {exc}"})
            continue
        rows.append(
            {"provider": label, "name": emb.name, "dimension": emb.dimension}
            | {"load_s": round(load_s, 3)}
            | result
        )

    table = Table(title=f"Embedding throughput ({args.texts} texts, batch {args.batch})")
    cols = ("provider", "space", "dim", "load s", "texts/s", "texts/cpu-s", "1 text p50 ms", "p95")
    for col in cols:
        table.add_column(col, justify="left" if col in ("provider", "space") else "right")
    for row in rows:
        if "error" in row:
            table.add_row(row["provider"], f"[red]{row['error']}[/red]", *[""] * 6)
            continue
        table.add_row(
            row["provider"],
            row["name"],
            str(row["dimension"]),
            f"{row['load_s']:.3f}",
            f"{row['texts_per_s']:.1f}",
            f"{row['texts_per_cpu_s']:.1f}",
            f"{row['single_ms_p50']:.2f}",
            f"{row['single_ms_p95']:.2f}",
        )
    console.print(table)
    console.print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or RESULTS / f"embedders-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "benchmark": "embedders",
        "utc": stamp,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            # figures from a busy machine are not comparable; record how busy it was
            "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
        },
        "results": rows,
    }
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
