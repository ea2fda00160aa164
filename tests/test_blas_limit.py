"""BLAS threads: set once per process at the first recall, overridable by environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = """
import json
import threading
from attestor_arango import AgentContext
from attestor_arango.core.blas import blas_threads
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory

before = blas_threads()
mem = AgentMemory({path!r}, embedder=HashingEmbedder())
ctx = AgentContext(agent_id="a", tenant="t")
mem.add("the blas limit is set at the first recall", context=ctx)
seen = []
t = threading.Thread(target=lambda: seen.append(mem.recall("blas limit", context=ctx)))
t.start(); t.join()  # a worker thread, as in the REST server
print(json.dumps([before, blas_threads(), len(seen[0].results)]))
"""


def _run(tmp_path: object, env_value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ATTESTOR_BLAS_THREADS"}
    env["OPENBLAS_NUM_THREADS"] = "2"
    if env_value is not None:
        env["ATTESTOR_BLAS_THREADS"] = env_value
    code = SCRIPT.format(path=str(tmp_path) + "/m.db")
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.mark.parametrize(("env_value", "after"), [(None, [1]), ("2", [2]), ("0", [2])])
def test_first_recall_sets_the_blas_threads(
    tmp_path: object, env_value: str | None, after: list[int]
) -> None:
    done = _run(tmp_path, env_value)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[2], after, 1]


def test_a_bad_value_is_a_clear_error(tmp_path: object) -> None:
    done = _run(tmp_path, "many")
    assert done.returncode != 0
    assert "ATTESTOR_BLAS_THREADS must be a whole number" in done.stderr
