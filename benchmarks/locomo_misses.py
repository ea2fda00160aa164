"""LoCoMo dev misses, one by one: where each evidence turn ranked and why.

    python benchmarks/locomo_misses.py [--embedder local|hashing] [--retrieval JSON]
        [--loader conversation|add] [--k 10] [--dump FILE]

Stores conversations 26 and 30 through ``add_turns`` (benchmarks/locomo.py's loader,
the public API, the default budget; ``--loader add``: one plain ``add()`` per turn),
asks every question of categories 1-4 and prints the figures per category, then
every question whose evidence is not in the top ``k``: each evidence turn with its
rank (None: not returned), the ranks of the turn it replies to and of the turn after
it, and the score breakdown of the evidence and of the top three (lane ranks, graph
bonus, decay, boost, freshness, neighbour support, session coverage, time cue,
relevance, final). An analysis aid, not a benchmark: nothing is
written to benchmarks/results/. Embeddings are cached in benchmarks/.cache/ (text
-> vector, per embedder), so a rerun after a ranking change takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import locomo as lc  # noqa: E402
from rich.progress import Progress  # noqa: E402

from attestor_arango.embeddings import Embedder  # noqa: E402
from attestor_arango.retrieval import RetrievalConfig  # noqa: E402


class CachedEmbedder:
    """The same embedding space as ``inner``, with each text embedded once per cache file."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self.inner, self.path = inner, path
        self.name, self.dimension = inner.name, inner.dimension
        self.vectors: dict[str, np.ndarray] = {}
        if path.exists():
            self.vectors = pickle.loads(path.read_bytes())  # our own cache file
        self.changed = False

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            for text, vec in zip(missing, self.inner.embed(missing), strict=True):
                self.vectors[text] = np.asarray(vec, dtype=np.float32)
            self.changed = True
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)

    def save(self) -> None:
        if self.changed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(pickle.dumps(self.vectors))


SIGNALS = {
    "v": "vector_rank",
    "t": "bm25_rank",
    "rrf": "rrf_norm",
    "g": "graph_bonus",
    "d": "decay",
    "b": "boost",
    "f": "freshness",
    "s": "session",
    "c": "coverage",
    "tc": "time_cue",
    "rel": "relevance",
    "fin": "final",
}


def _rank(ranked: list[str], dia: str) -> int | None:
    return ranked.index(dia) + 1 if dia in ranked else None


def run(
    embedder_name: str, config: RetrievalConfig, data: str, loader: str = "conversation"
) -> list[dict[str, Any]]:
    emb = CachedEmbedder(
        lc.pick_embedder(embedder_name), HERE / ".cache" / f"locomo-misses-{embedder_name}.pkl"
    )
    convs = [c for c in lc.load_conversations(data) if lc.short_id(c.sample_id) in {"26", "30"}]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, Progress(transient=True) as progress:
        mem, contexts = lc.build(convs, emb, loader, Path(tmp), progress)
        mem.retrieval_config = config
        try:
            for conv in convs:
                said = {t.dia_id: f"{t.speaker}: {t.text}" for t in conv.turns}
                for qa, gold in lc.questions(conv):
                    resp = mem.recall(str(qa["question"]), context=contexts[conv.sample_id])
                    ranked: list[str] = []
                    why: dict[str, dict[str, Any]] = {}
                    for r in resp.results:
                        dia = r.memory.metadata.get("dia_id")
                        if r.breakdown.synthetic or dia is None or dia in why:
                            continue
                        ranked.append(str(dia))
                        b = r.breakdown.model_dump()
                        why[str(dia)] = {k: b[f] for k, f in SIGNALS.items()}
                    row = lc.score_question(ranked, gold)
                    row.update(
                        conversation=lc.short_id(conv.sample_id),
                        category=int(qa["category"]),
                        question=qa["question"],
                        gold=sorted(gold),
                        ranked=ranked,
                        why={d: why[d] for d in [*sorted(gold), *ranked[:3]] if d in why},
                        said={d: said.get(d, "") for d in [*sorted(gold), *ranked[:3]]},
                    )
                    rows.append(row)
        finally:
            mem.close()
    emb.save()
    return rows


def show(rows: list[dict[str, Any]], k: int) -> None:
    res = lc.summarise(rows, [0.0])
    for name, o in [*res["per_category"].items(), ("overall", res["overall"])]:
        print(
            f"{name:14s} n={o['n']:3d} turn R@1/5/10 {o['turn_r1']:.3f}/{o['turn_r5']:.3f}/"
            f"{o['turn_r10']:.3f} session R@5/10 {o['sess_r5']:.3f}/{o['sess_r10']:.3f}"
        )
    for r in rows:
        if any(d in r["ranked"][:k] for d in r["gold"]):
            continue
        print(f"\n[{r['conversation']} cat {r['category']}] {r['question']}")
        for d in r["gold"]:
            session, turn = d[1:].split(":")
            before, after = f"D{session}:{int(turn) - 1}", f"D{session}:{int(turn) + 1}"
            print(
                f"  gold {d} @{_rank(r['ranked'], d)} (replies to @{_rank(r['ranked'], before)},"
                f" answered @{_rank(r['ranked'], after)}) {r['why'].get(d)}\n"
                f"      {r['said'][d][:140]!r}"
            )
        for d in r["ranked"][:3]:
            print(f"  top  {d} {r['why'].get(d)}\n      {r['said'][d][:140]!r}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data" / "locomo"))
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--retrieval", default="{}", help="JSON overrides of RetrievalConfig")
    ap.add_argument("--loader", default="conversation", choices=sorted(lc.LOADERS))
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--dump", default=None, help="also write every question's row as JSON")
    args = ap.parse_args(argv)
    config = RetrievalConfig.from_dict(json.loads(args.retrieval))
    rows = run(args.embedder, config, args.data, args.loader)
    show(rows, args.k)
    if args.dump:
        Path(args.dump).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
