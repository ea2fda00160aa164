"""benchmarks/recall_profile.py runs end to end on a small store (so it does not rot)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_recall_profile_reports_nested_step_timings(tmp_path: Path) -> None:
    out = tmp_path / "profile.json"
    args = ["--memories", "300", "--queries", "8", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "recall_profile.py"), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    assert report["memories"] == 300 and report["queries"] == 8
    steps = report["steps"]
    for label in (
        "lanes (vector + text + completion)",
        "    text pool and its BM25 (store)",
        "budget packing",
        "fusion",
    ):
        assert steps[label]["calls_per_recall"] == 1.0
        assert steps[label]["per_recall_ms"] > 0
    # a query no visible row matches has no pool to score: the index skips its BM25
    assert 0 < steps["      BM25 over the pool"]["calls_per_recall"] <= 1.0
    assert steps["      BM25 over the pool"]["per_recall_ms"] > 0
    # nested steps take part of their parent's time
    assert (
        steps["lanes (vector + text + completion)"]["per_recall_ms"]
        < report["recall"]["per_recall_ms"]
    )
    text = steps["  text lane"]["per_recall_ms"]
    assert steps["      BM25 over the pool"]["per_recall_ms"] < text
    assert "    BM25 re-scoring (other backends)" not in steps  # the store scored its pools
