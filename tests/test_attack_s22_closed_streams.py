"""The CLI run with its standard streams closed (``<&-``, ``>&-``, ``2>&-``: a harness that
gives a hook no stdin, a cron job without a terminal) ended with an AttributeError
traceback (``sys.stdin``/``sys.stdout`` are None then), after a hook had already stored
its note. Closed descriptors 0-2 are now opened on the null device first: an absent
stdin reads as empty, an absent stdout or stderr discards what is written, and the
store's own file can never be given descriptor 0, 1 or 2 (where a write meant for
stdout or stderr would land in the database)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from interface_support import PYTHON, cli_env

CLI = f"{PYTHON} -m attestor_arango.interfaces.cli.main"


def run(tmp_path: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def stats(tmp_path: Path, db: Path) -> dict:
    done = run(tmp_path, f"{CLI} --json stats --path {db}")
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize(
    "closed",
    ["<&-", ">&-", "2>&-", "<&- >&- 2>&-"],
    ids=["stdin", "stdout", "stderr", "all"],
)
def test_a_hook_with_closed_streams_runs_without_a_traceback(tmp_path: Path, closed: str) -> None:
    db = tmp_path / "m.db"
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"session_id": "s1", "cwd": "/src/app"}), encoding="utf-8")
    given = "" if "<&-" in closed else f"< {event}"
    # stderr is captured outside the closed one: a traceback would show there
    done = run(tmp_path, f"( {CLI} hook stop --path {db} {given} {closed} ; echo rc=$? ) 2>&1")
    assert "Traceback" not in done.stdout and done.stdout.strip().endswith("rc=0"), done.stdout
    assert stats(tmp_path, db)["total"] == 1  # the summary, in a store that still opens


def test_list_with_stdout_closed_is_quiet(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assert run(tmp_path, f"{CLI} add 'Ann likes tea' --path {db}").returncode == 0
    done = run(tmp_path, f"( {CLI} list --path {db} >&- ; echo rc=$? ) 2>&1")
    assert "Traceback" not in done.stdout and done.stdout.strip().endswith("rc=0"), done.stdout
    assert stats(tmp_path, db)["total"] == 1
