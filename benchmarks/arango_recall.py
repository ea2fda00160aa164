"""LoCoMo evidence recall on ArangoDB next to the embedded store, same data, same pipeline.

    python benchmarks/arango_recall.py [--data ../shared/data/locomo] [--conversations 26]
        [--embedder hashing|local|auto] [--ann] [--out FILE]

Uses the ingest and scoring of ``benchmarks/locomo.py`` unchanged; only the Store differs.
The ArangoDB server is the one the test suite would use: ``ARANGO_URL`` (with
``ARANGO_USER`` / ``ARANGO_PASSWORD``), else a testcontainers ``arangodb:3.12.x`` container
when Docker answers. Each run gets a fresh database, dropped afterwards. When no server is
reachable the ArangoDB column is reported as skipped with the reason, and the embedded
numbers are still printed.

``--ann`` creates the vector index after ingest (training needs the documents first up to
3.12.8) and lowers the small-tenant threshold to 0, so the vector lane goes through
APPROX_NEAR_COSINE; without it every tenant is served by the exact COSINE_SIMILARITY scan,
which must score exactly like the embedded backend. Nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import (  # the same loading, ingest and scoring as the LoCoMo benchmark
    RESULTS_DIR,
    ingest,
    load_conversations,
    pick_embedder,
    run_questions,
    short_id,
    table,
)

from attestor_arango.clock import ManualClock
from attestor_arango.embeddings import Embedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory
from attestor_arango.store.arango.executor import Executor
from attestor_arango.store.arango.schema import ensure_vector_index
from attestor_arango.store.embedded.store import SQLiteStore
from attestor_arango.store.protocol import Store
from tests.support.arango_server import LiveServer, fresh_store, resolve_server


def run_on(
    store: Store, convs: list[Any], embedder: Embedder, style: str, progress: Progress, label: str
) -> dict[str, Any]:
    last = max(t.when for c in convs for t in c.turns)
    mem = AgentMemory(
        store=store,
        embedder=embedder,
        clock=ManualClock(last + timedelta(days=1)),
        ids=SeededIdSource(1),
    )
    t0 = time.perf_counter()
    contexts = {c.sample_id: ingest(mem, c, style) for c in convs}
    ingest_s = time.perf_counter() - t0
    try:
        result = run_questions(mem, convs, contexts, progress, label)
    finally:
        mem.close()
    result["ingest_s"] = round(ingest_s, 2)
    return result


def arango_run(
    server: LiveServer, convs: list[Any], embedder: Embedder, args: Any, progress: Progress
) -> dict[str, Any]:
    store, drop = fresh_store(server, search_wait_for_sync=True)
    try:
        if not args.ann:
            return run_on(store, convs, embedder, args.style, progress, "arangodb exact")
        # ingest first, then train the index over the stored vectors, then query via ANN
        last = max(t.when for c in convs for t in c.turns)
        mem = AgentMemory(
            store=store,
            embedder=embedder,
            clock=ManualClock(last + timedelta(days=1)),
            ids=SeededIdSource(1),
        )
        contexts = {c.sample_id: ingest(mem, c, args.style) for c in convs}
        db = store.database
        index = ensure_vector_index(db, Executor(store.executor.registry, lambda: db), min_docs=1)
        store.vector_index(refresh=True)
        store.vector_min_docs = 0
        try:
            result = run_questions(mem, convs, contexts, progress, "arangodb ann")
        finally:
            mem.close()
        result["vector_index"] = index
        return result
    finally:
        drop()


def main() -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    here = Path(__file__).resolve()
    ap.add_argument("--data", default=str(here.parents[2] / "shared" / "data" / "locomo"))
    ap.add_argument("--conversations", default="26")
    ap.add_argument("--embedder", default="hashing")
    ap.add_argument("--style", default="prev", choices=["turn", "prev", "next", "window"])
    ap.add_argument("--ann", action="store_true", help="build the vector index and use ANN")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    wanted = {x.strip() for x in args.conversations.split(",") if x.strip()}
    convs = [c for c in load_conversations(args.data) if short_id(c.sample_id) in wanted]
    console = Console()
    embedder = pick_embedder(args.embedder)
    runs: dict[str, dict[str, Any]] = {}
    skipped: str | None = None
    with tempfile.TemporaryDirectory() as tmp, Progress(console=console) as progress:
        embedded = SQLiteStore(Path(tmp) / "bench.db")
        runs["embedded"] = run_on(embedded, convs, embedder, args.style, progress, "embedded")
        server = resolve_server()
        if isinstance(server, str):
            skipped = f"ArangoDB run skipped: {server}"
        else:
            try:
                name = "arangodb ann" if args.ann else "arangodb exact"
                runs[name] = arango_run(server, convs, embedder, args, progress)
            finally:
                if server.stop is not None:
                    server.stop()
    ids = ",".join(sorted(wanted))
    console.print(table(runs, f"LoCoMo [{ids}] per backend, embedder={embedder.name}"))
    if skipped:
        console.print(f"[yellow]{skipped}[/yellow]")
    report = {
        "benchmark": "arango_recall",
        "embedder": embedder.name,
        "conversations": sorted(wanted),
        "style": args.style,
        "ann": args.ann,
        "runs": runs,
        "arangodb_skipped": skipped,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    out = (
        Path(args.out) if args.out else RESULTS_DIR / f"arango-recall-{ids.replace(',', '_')}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    console.print(f"wrote {out}")
    return report


if __name__ == "__main__":
    main()
