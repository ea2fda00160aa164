"""CI step (issue 18): a non-editable install, outside the checkout, with no network.

Run by .ci/run with the fresh venv's python from a directory outside the checkout.
Checks that the package is the installed copy, that the default embedder is the
semantic model it ships, that a paraphrase sharing no content word with its fact
is recalled first, and that `api` / `mcp` without their extras fail with the
command that installs them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import attestor_arango
from attestor_arango.memory import AgentMemory

site = Path(sysconfig.get_paths()["purelib"]).resolve()
where = Path(attestor_arango.__file__).resolve()
assert site in where.parents, f"attestor_arango imported from {where}, not the venv {site}"

with tempfile.TemporaryDirectory() as home, AgentMemory(home) as mem:
    assert mem.embedder.name == "minilm-l6-v2-int8-onnx", mem.embedder.name
    mem.add("Alice is the engineering manager", entity="alice", category="role")
    mem.add("Bob is allergic to peanuts", entity="bob", category="diet")
    mem.add("Carol moved to Lisbon last spring", entity="carol", category="home")
    response = mem.recall("who relocated to Portugal?")
    assert response.errors == {}, response.errors
    top = response.results[0].memory.entity
    assert top == "carol", f"paraphrase recalled {top!r}, expected 'carol'"

cli = Path(sys.executable).with_name("attestor-arango")
for command, extra in (("api", "server"), ("mcp", "mcp")):
    done = subprocess.run(
        [str(cli), command, "--no-auth"] if command == "api" else [str(cli), command],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "ATTESTOR_HOME": tempfile.mkdtemp()},
    )
    wanted = f"pip install 'attestor-arango[{extra}]'"
    assert done.returncode != 0 and wanted in done.stderr, (command, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
print("fresh install: semantic default recalled the paraphrase offline; api/mcp name their extra")
