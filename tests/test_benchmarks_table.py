"""The README's published figures come from committed results files, and stay in sync."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_CITED = re.compile(r"benchmarks/results/[\w.+-]+\.json")


def tracked() -> set[str] | None:
    """Files git tracks (None outside a checkout, e.g. an sdist)."""
    done = subprocess.run(
        ["git", "ls-files", "benchmarks/results"], cwd=ROOT, capture_output=True, text=True
    )
    return set(done.stdout.split()) if done.returncode == 0 and done.stdout else None


def test_every_results_file_the_readme_cites_is_committed() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cited = set(_CITED.findall(readme))
    assert cited, "the README cites no results file"
    in_git = tracked()
    for name in sorted(cited):
        assert (ROOT / name).is_file(), f"README cites {name}, which does not exist"
        if in_git is not None:
            assert name in in_git, f"README cites {name}, which is not committed (git add -f)"


def test_the_benchmarks_table_is_generated_from_those_files() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/report.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
