"""Re-embedding a 10k-memory tenant: time, and what changes (issue 18 item 2).

Fills an embedded store with N generated memories under the hashing embedder (some
superseded, some archived), records a few recalls, then moves the tenant to MiniLM with
``AgentMemory.reembed`` and reports: the wall time of the move (and of the staging and
the swap), that every version of every row is unchanged field for field, the recalls
after the move, and what an ``as_of`` replay of a recall made before the move returns.

    python benchmarks/reembed.py --n 10000 --out benchmarks/results/reembed.json

``--target hashing`` moves to a hashing embedder of another dimension instead of MiniLM,
so a large tenant (``--n 100000``) runs in minutes: what it measures then is the swap's
memory, ``reembed_peak_rss_mb`` (the process's peak resident set during ``reembed`` alone:
the peak is reset just before it, Linux ``/proc/self/clear_refs``), beside
``rss_before_reembed_mb`` (what the process held already: the rows listed for the check).

The machine is shared (2 cores, other jobs running): times are one run's wall clock.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from attestor_arango.clock import ManualClock, iso
from attestor_arango.embeddings import Embedder, HashingEmbedder, LocalMiniLMEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.memory import AgentMemory

PEOPLE = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
FACTS = [
    ("role", "{p} is the engineering manager of team {i}"),
    ("diet", "{p} is allergic to peanuts and avoids dish {i}"),
    ("home", "{p} moved to Lisbon, flat {i}"),
    ("pet", "{p} adopted a golden retriever puppy named Rex {i}"),
    ("job", "{p} repairs vintage motorcycles, order {i}"),
    ("hobby", "{p} plays the cello in orchestra {i}"),
]
QUERIES = ["who runs engineering?", "who cannot eat nuts?", "who got a new dog?"]


def fill(mem: AgentMemory, clock: ManualClock, n: int) -> None:
    for i in range(n):
        person = PEOPLE[i % len(PEOPLE)]
        category, text = FACTS[(i // len(PEOPLE)) % len(FACTS)]
        # every 5th row restates the fact of the row 60 before it (same person, category
        # and entity), so that earlier version is superseded
        entity = f"{person.lower()}-{i % 60 if i % 5 == 0 else i}"
        mem.add(text.format(p=person, i=i), entity=entity, category=category)
        clock.advance(seconds=1)


def top(mem: AgentMemory, query: str, as_of: str | None = None) -> dict[str, Any]:
    response = mem.recall(query, as_of=as_of)
    return {
        "query": query,
        "errors": response.errors,
        "ids": [r.memory.id for r in response.results[:5]],
        "top": [r.memory.content for r in response.results[:3]],
    }


def rows(mem: AgentMemory) -> list[str]:
    return [json.dumps(m.model_dump(mode="json"), sort_keys=True) for m in _all(mem)]


def _all(mem: AgentMemory) -> list[Any]:
    out: list[Any] = []
    while True:
        page = mem.list(status="all", limit=1000, offset=len(out))
        out.extend(page)
        if len(page) < 1000:
            return out


def _status_mb(field: str) -> float | None:
    """A ``/proc/self/status`` size (VmRSS, VmHWM) in MB; None where there is no /proc."""
    try:
        text = Path("/proc/self/status").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def _reset_peak() -> None:
    """Resets the peak resident set (VmHWM) to the current one (Linux 4.0+)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5", encoding="utf-8")


def target_embedder(name: str) -> Embedder:
    """MiniLM (the move the docs report), or a hashing embedder of another dimension."""
    return LocalMiniLMEmbedder() if name == "minilm" else HashingEmbedder(256)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--target", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    clock = ManualClock()
    with tempfile.TemporaryDirectory() as home:
        db = Path(home) / "memory.db"
        t0 = time.perf_counter()
        with AgentMemory(db, embedder=HashingEmbedder(), clock=clock, ids=SeededIdSource(1)) as m:
            fill(m, clock, args.n)
            before = [top(m, q) for q in QUERIES]
            replay_at = iso(clock.now_us())
        fill_s = time.perf_counter() - t0
        clock.advance(seconds=60)

        target = target_embedder(args.target)
        with AgentMemory(db, embedder=target, clock=clock, ids=SeededIdSource(2)) as m:
            versions_before = rows(m)
            stale = [top(m, q) for q in QUERIES]
            staged: list[float] = []

            def progress(done: int, total: int) -> None:
                if done == total and total:
                    staged.append(time.perf_counter())

            rss_before = _status_mb("VmRSS")
            _reset_peak()
            t1 = time.perf_counter()
            report = m.reembed(batch_size=args.batch_size, progress=progress)
            t2 = time.perf_counter()
            peak = _status_mb("VmHWM")
            versions_after = rows(m)
            after = [top(m, q) for q in QUERIES]
            replay = [top(m, q, as_of=replay_at) for q in QUERIES]

    result = {
        "n_added": args.n,
        "memories_reembedded": report["memories"],
        "versions": len(versions_before),
        "from": report["from"],
        "to": report["to"],
        "batch_size": args.batch_size,
        "fill_seconds": round(fill_s, 2),
        "reembed_seconds": round(t2 - t1, 2),
        "staging_seconds": round((staged[0] if staged else t2) - t1, 2),
        "swap_seconds": round(t2 - (staged[0] if staged else t2), 2),
        "rss_before_reembed_mb": rss_before,
        "reembed_peak_rss_mb": peak,
        "rows_unchanged": versions_before == versions_after,
        "recall_before_move_with_old_embedder": before,
        "recall_with_new_embedder_before_move": stale,
        "recall_after_move": after,
        "as_of_replay_of_before": replay,
        "replay_same_ids_as_recorded": [
            b["ids"] == r["ids"] for b, r in zip(before, replay, strict=True)
        ],
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
