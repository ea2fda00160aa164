"""Issue 17 item 4: which optional ranking steps earn their place, through the public API.

    python benchmarks/ablate_ranking.py [--embedder local|hashing] [--split test]
        [--skip-locomo] [--skip-ku] [--out FILE]

Each variant switches ONE step of ``RetrievalConfig`` off (the rest at its defaults)
and is measured on:

- the knowledge-update suite (benchmarks/ku_suite), the given split, through ``add``
  and through ``ingest_round``: each case is stored once with the default config,
  then recalled with every variant (so in ``ingest`` mode the resolver's candidate
  search ran with the defaults; only the final recall differs);
- LoCoMo dev (conversations 26 and 30) through ``add_turns`` (``benchmarks/locomo.py``
  loader ``conversation``, the default) or one plain ``add()`` per turn (``--loader add``,
  the commonest use): one store, every variant's recall over its 231 questions.

``all_off`` switches every optional step off at once (issue 21's "every ranking step
off" figure), to set against ``full``.

A step helps when switching it off lowers the figure. JSON (figures per variant, the
machine's load before and after) goes to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "ku_suite"))

import locomo  # noqa: E402
from cases import build_cases  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import Progress  # noqa: E402
from run import judge, open_case, pick_embedder, store_case  # noqa: E402

from attestor_arango.retrieval import RetrievalConfig  # noqa: E402

# one optional step switched off per variant; "full" is the defaults
VARIANTS: dict[str, dict[str, Any]] = {
    "full": {},
    "no_mmr": {"mmr_enabled": False},
    "no_decay": {"decay_enabled": False},
    "no_boost": {"boost_enabled": False},
    "no_freshness": {"freshness_enabled": False},
    "no_coverage": {"coverage_enabled": False},
    "no_graph": {"graph_enabled": False},
    "no_relations": {"relations_enabled": False},
    "no_neighbours": {"neighbour_weight": 0.0},
    "no_time_cue": {"time_cue_enabled": False},
    "no_lane_completion": {"lane_completion": False},
    "no_bm25_rescore": {"bm25_rescore": False},
    "no_asking": {"asking_weight": 0.0},
    "no_speaker": {"speaker_weight": 0.0},
}
# every optional step above off at once (lane completion and the BM25 rescore are how the
# lanes rank, and stay on, as in issue 21's "every ranking step off")
VARIANTS["all_off"] = {
    k: v
    for name, changes in VARIANTS.items()
    if name not in ("no_lane_completion", "no_bm25_rescore")
    for k, v in changes.items()
    if k in RetrievalConfig.__dataclass_fields__  # a deleted step is not switched off
}
# the steps after fusion that read time (decay, boost, freshness) off together
VARIANTS["no_time_steps"] = {
    "decay_enabled": False,
    "boost_enabled": False,
    "freshness_enabled": False,
}


def _variants(names: list[str]) -> dict[str, RetrievalConfig]:
    known = set(RetrievalConfig.__dataclass_fields__)
    out = {}
    for name in names:
        changes = VARIANTS[name]
        if set(changes) <= known:  # a deleted step's variant is skipped, not an error
            out[name] = RetrievalConfig().replace(**changes)
    return out


def ku(embedder_name: str, split: str, mode: str, names: list[str]) -> dict[str, Any]:
    embedder = pick_embedder(embedder_name)
    configs = _variants(names)
    cases = [c for c in build_cases() if split in ("all", c["split"])]
    outcomes: dict[str, Counter[str]] = {name: Counter() for name in configs}
    with tempfile.TemporaryDirectory() as tmp:
        for i, case in enumerate(cases):
            mem, clock = open_case(case, i, mode, embedder, Path(tmp))
            with mem:
                owner = store_case(mem, clock, case, i, mode)
                for name, config in configs.items():
                    mem.retrieval_config = config
                    row = judge(case, mem.recall(case["question"]), owner, mode)
                    outcomes[name][row["outcome"]] += 1
    return {
        name: {
            "n": len(cases),
            **{k: c.get(k, 0) for k in ("new_wins", "stale_wins", "miss")},
            "rate": round(c.get("new_wins", 0) / max(1, len(cases)), 4),
        }
        for name, c in outcomes.items()
    }


def locomo_dev(
    embedder_name: str, names: list[str], data: str, loader: str = "conversation"
) -> dict[str, Any]:
    convs = [
        c for c in locomo.load_conversations(data) if locomo.short_id(c.sample_id) in {"26", "30"}
    ]
    embedder = locomo.pick_embedder(embedder_name)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, Progress(console=Console(stderr=True)) as bar:
        mem, contexts = locomo.build(convs, embedder, loader, Path(tmp), bar)
        try:
            for name, config in _variants(names).items():
                mem.retrieval_config = config
                res = locomo.run_questions(mem, convs, contexts, bar, name)
                keep = ("turn_r1", "turn_r5", "turn_r10", "sess_r5", "sess_r10", "mrr", "n")
                out[name] = {k: res["overall"][k] for k in keep}
        finally:
            mem.close()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--embedder", default="local")
    ap.add_argument("--split", default="test", choices=["dev", "test", "all"])
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--skip-locomo", action="store_true")
    ap.add_argument("--loader", default="conversation", choices=sorted(locomo.LOADERS))
    ap.add_argument("--skip-ku", action="store_true")
    ap.add_argument("--data", default=str(HERE.parents[1] / "shared" / "data" / "locomo"))
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    names = [n for n in args.variants.split(",") if n]
    report: dict[str, Any] = {
        "embedder": args.embedder,
        "variants": {n: VARIANTS[n] for n in names},
        "load_before": os.getloadavg(),
    }
    if not args.skip_ku:
        for mode in ("add", "ingest"):
            report[f"ku_{mode}_{args.split}"] = ku(args.embedder, args.split, mode, names)
            Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if not args.skip_locomo:
        key = "locomo_dev_add_turns" if args.loader == "conversation" else "locomo_dev_add"
        report[key] = locomo_dev(args.embedder, names, args.data, args.loader)
    report["load_after"] = os.getloadavg()
    report["generated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "variants"}, indent=1))
    return report


if __name__ == "__main__":
    main()
