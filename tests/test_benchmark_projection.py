"""benchmarks/projection.py: runs end to end on a tiny store, and carries the issue's figures
over by the ratios it read (never how fast anything is: no timing is asserted)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import projection  # noqa: E402


def _report(p50: tuple[float, float], p95: tuple[float, float], load: float) -> dict[str, Any]:
    def row(a: float, b: float) -> dict[str, Any]:
        return {
            "memories": 1000,
            "recall_p50_ms": a,
            "recall_p95_ms": b,
            "recall_cpu_p50_ms": a,
            "results_per_recall": 85,
        }

    this = {**row(p50[0], p95[0]), "recall_cpu_paired_ratio": p50[0] / p50[1]}
    return {
        "compare": "old",
        "load_average_before": [load, 0, 0],
        "load_average_after": [load + 1, 0, 0],
        "results": [{"this": this, "old": row(p50[1], p95[1])}],
    }


def test_summary_carries_the_issue_figures_over_by_the_median_ratios() -> None:
    pairs = [((3.0, 10.0), (5.0, 20.0)), ((4.0, 10.0), (6.0, 20.0)), ((2.0, 10.0), (9.0, 20.0))]
    reports = [
        _report(p50, p95, load) for (p50, p95), load in zip(pairs, (1.0, 2.0, 3.0), strict=True)
    ]
    size = projection.summarise(reports)["sizes"]["1000"]
    p50s = [a / b for (a, b), _ in pairs]
    p95s = [a / b for _, (a, b) in pairs]
    assert size["runs"] == 3
    assert size["p50_ratio"]["median"] == pytest.approx(statistics.median(p50s))
    assert size["p50_ratio"]["min"] == pytest.approx(min(p50s))
    assert size["p95_ratio"]["max"] == pytest.approx(max(p95s))
    issue = projection.ISSUE[1000]
    assert size["projected_p50_ms"] == round(issue["p50"] * statistics.median(p50s), 2)
    assert size["projected_p95_ms"] == round(issue["p95"] * statistics.median(p95s), 2)
    assert size["results_per_recall"] == {"this": 85, "old": 85}


def test_reports_of_different_codes_are_refused() -> None:
    other = {**_report((1.0, 2.0), (1.0, 2.0), 1.0), "compare": "else"}
    with pytest.raises(ValueError, match="one other code"):
        projection.summarise([_report((1.0, 2.0), (1.0, 2.0), 1.0), other])


def test_instruction_ratio_projection() -> None:
    report = {
        "size": 1000,
        "codes": {"this": {"instructions_m": 9.0}, "old": {"instructions_m": 30.0}},
    }
    out = projection.by_instructions(report, "old")
    assert out["ratio"] == pytest.approx(0.3)
    assert out["projected_p50_ms"] == round(projection.ISSUE[1000]["p50"] * 0.3, 2)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the git checkout (a worktree)")
def test_projection_runs_end_to_end_on_a_tiny_store(tmp_path: Path) -> None:
    out, folder = tmp_path / "projection.json", tmp_path / "runs"
    args = ["--runs", "2", "--compare", "HEAD", "--sizes", "150", "--folder", str(folder)]
    args += ["--out", str(out), "--data", "synthetic", "--queries", "6"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "projection.py"), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ATTESTOR_BENCH_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    size = json.loads(out.read_text())["sizes"]["150"]
    assert size["runs"] == 2 and len(list(folder.glob("run-*.json"))) == 2
    assert "projected_p50_ms" not in size  # the issue has no figure at 150
    for run, path in zip(size["per_run"], sorted(folder.glob("run-*.json")), strict=True):
        rows = json.loads(path.read_text())["results"][0]
        assert run["p50_ratio"] == rows["this"]["recall_p50_ms"] / rows["HEAD"]["recall_p50_ms"]
        # HEAD against itself: the same answers on both sides
        assert rows["this"]["ranking_hash"] == rows["HEAD"]["ranking_hash"]


def test_runs_where_a_side_waited_for_a_core_are_left_out_of_the_quiet_ratio() -> None:
    quiet = [_report((3.0, 10.0), (5.0, 20.0), 1.0), _report((2.8, 10.0), (5.0, 20.0), 1.0)]
    loaded = _report((2.0, 10.0), (5.0, 20.0), 5.0)
    loaded["results"][0]["old"]["recall_cpu_p50_ms"] = 5.0  # waited: wall twice its CPU
    size = projection.summarise([*quiet, loaded])["sizes"]["1000"]
    assert size["runs"] == 3 and size["quiet_runs"] == 2
    assert size["quiet_p50_ratio"]["median"] == pytest.approx(statistics.median([0.3, 0.28]))
    assert size["p50_ratio"]["median"] == pytest.approx(0.28)
    ratio = statistics.median([0.3, 0.28])
    assert size["projected_p50_ms_quiet_runs"] == round(projection.ISSUE[1000]["p50"] * ratio, 2)
