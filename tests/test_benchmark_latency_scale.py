"""benchmarks/latency.py and benchmarks/scale.py run end to end on tiny stores (so they do not rot).

Only what they report is checked, never how fast: timings on a shared machine are not
something a test can assert.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = Path(os.environ.get("ATTESTOR_LOCOMO_DIR", ROOT.parent / "shared" / "data" / "locomo"))


def _run(script: str, args: list[str], tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ATTESTOR_BENCH_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr


def test_latency_reports_first_recall_rss_and_a_recall_hash(tmp_path: Path) -> None:
    out = tmp_path / "latency.json"
    args = ["--data", "synthetic", "--sizes", "150", "300", "--queries", "6", "--rounds", "1"]
    _run("latency.py", [*args, "--out", str(out)], tmp_path)
    report = json.loads(out.read_text())
    rows = [size["this"] for size in report["results"]]
    assert [r["memories"] for r in rows] == [150, 300]
    for r in rows:
        assert r["recalls_timed"] == 6 and r["first_recall_ms"] > 0 and r["rss_mb"] > 0
        assert len(r["recall_hash"]) == 16 and len(r["ranking_hash"]) == 16
    assert rows[0]["recall_hash"] != rows[1]["recall_hash"]  # the answers changed with the rows
    assert rows[0]["ranking_hash"] != rows[1]["ranking_hash"]
    assert rows[1]["adds_timed"] == 150


@pytest.mark.skipif(not LOCOMO.is_dir(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_scale_reports_files_and_recalls_per_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    args = ["--checkpoints", "120", "250", "--tenants", "2", "--per-tenant", "60"]
    args += ["--vectors", "hashing", "--window", "50"]  # no model to load; 50 adds timed
    _run("scale.py", [*args, "--queries", "5", "--out", str(out)], tmp_path)
    report = json.loads(out.read_text())
    single = report["single_tenant"]
    assert [r["memories"] for r in single] == [120, 250]
    for r in single:
        assert r["index_files_mb"] > 0 and r["db_mb"] > 0 and r["recall_p50_ms"] > 0
    assert report["many_tenants"]["tenants"] == 2
