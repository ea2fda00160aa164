"""benchmarks/ku_suite/blind_cases.py: set B stays as it was frozen (a blind set edited after
a result was read is no longer blind), and the runner takes both sets."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "ku_suite"))

from blind_cases import SETS, build_blind  # noqa: E402

# sha256 of set B's cases as JSON with sorted keys, taken when it was frozen (2026-12-08)
FROZEN_B = "64dfa9b5fb03f597d76e2830a3a12f7f4d5a4a27fdef82171d43c66315d7ab8f"


RUN = [sys.executable, str(ROOT / "benchmarks" / "ku_suite" / "run.py"), "--embedder", "hashing"]


def _digest(name: str) -> str:
    return hashlib.sha256(json.dumps(build_blind(name), sort_keys=True).encode()).hexdigest()


def test_set_b_is_the_frozen_set() -> None:
    assert _digest("blind-b") == FROZEN_B


def test_each_case_is_an_update_with_unique_id_and_the_last_statement_current() -> None:
    for name in SETS:
        cases = build_blind(name)
        assert len({c["id"] for c in cases}) == len(cases)
        for c in cases:
            assert c["split"] == "test"
            assert len(c["sessions"]) >= 2
            assert c["answer"] == len(c["sessions"]) - 1
            assert c["question"].endswith("?")


def test_runner_refuses_a_split_without_cases() -> None:
    run = subprocess.run(
        [*RUN, "--cases", "blind-b"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2
    assert "--split test" in run.stderr


def test_runner_judges_blind_cases(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    run = subprocess.run(
        [*RUN, "--cases", "blind-a", "--split", "test", "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(out.read_text())
    assert report["cases_set"] == "blind-a"
    assert report["overall"]["n"] == len(build_blind("blind-a"))
    assert {r["outcome"] for r in report["cases"]} <= {"new_wins", "stale_wins", "miss"}
