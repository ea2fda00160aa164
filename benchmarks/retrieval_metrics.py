"""Ranking metrics shared by the retrieval benchmarks (LoCoMo, LongMemEval).

Binary relevance throughout: an item is relevant when it is one of the gold
evidence items. Every function takes the ranked list as it came out of recall,
with duplicates already removed.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


def dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def hit_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """1 when any gold item is in the top k."""
    return 1.0 if gold & set(ranked[:k]) else 0.0


def all_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """1 when every gold item is in the top k."""
    return 1.0 if gold and gold <= set(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: set[str]) -> float:
    for i, item in enumerate(ranked, start=1):
        if item in gold:
            return 1.0 / i
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 1) for i, x in enumerate(ranked[:k], start=1) if x in gold)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), k) + 1))
    return dcg / ideal if ideal else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


RESULTS_DIR = Path(__file__).resolve().parent / "results"


def write_report(report: dict[str, Any], out: Path) -> Path:
    """Writes a benchmark report as sorted, indented JSON (creating the folder)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out
