"""BLAS threads: the library leaves them alone; the CLI (and the servers it starts) sets them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LIBRARY = """
import json
import threading
from attestor_arango import AgentContext
from attestor_arango.core.blas import blas_threads
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

before = blas_threads()
mem = AgentMemory({path!r}, embedder=HashingEmbedder())
ctx = AgentContext(agent_id="a", tenant="t")
mem.add("the library leaves the blas threads of its host alone", context=ctx)
seen = []
t = threading.Thread(target=lambda: seen.append(mem.recall("blas threads", context=ctx)))
t.start(); t.join()
print(json.dumps([before, blas_threads(), len(seen[0].results)]))
"""

CLI = """
import json, sys
from attestor_arango.core.blas import blas_threads
from attestor_arango.interfaces.cli.main import main
before = blas_threads()
code = main(["stats", "--json", "--path", {path!r}])
print(json.dumps([before, blas_threads(), code]))
"""


def _env(env_value: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ATTESTOR_BLAS_THREADS"}
    env["OPENBLAS_NUM_THREADS"] = "2"
    env["ATTESTOR_EMBEDDER"] = "hashing"
    if env_value is not None:
        env["ATTESTOR_BLAS_THREADS"] = env_value
    return env


def _run(code: str, env_value: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(env_value),
        timeout=120,
    )


def test_the_library_never_changes_the_host_process_blas_threads(tmp_path: Path) -> None:
    done = _run(LIBRARY.format(path=str(tmp_path / "m.db")), None)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[2], [2], 1]


@pytest.mark.parametrize(("env_value", "after"), [(None, [1]), ("2", [2]), ("0", [2])])
def test_a_cli_command_sets_the_blas_threads(
    tmp_path: Path, env_value: str | None, after: list[int]
) -> None:
    done = _run(CLI.format(path=str(tmp_path / "m.db")), env_value)
    assert done.returncode == 0, done.stderr
    before, now, _ = json.loads(done.stdout.strip().splitlines()[-1])
    assert (before, now) == ([2], after)


def test_a_bad_value_is_a_clear_error(tmp_path: Path) -> None:
    done = _run(CLI.format(path=str(tmp_path / "m.db")), "many")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])[2] != 0  # the command failed
    assert "blas_threads" in done.stderr
