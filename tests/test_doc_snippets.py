"""Every Python snippet of SKILL.md and README.md runs as written, on a fresh store.

The snippets of one document run in order in one namespace (each builds on the ones
before, as a reader types them), in a subprocess whose home and data directories are
empty. A snippet that needs a server or an LLM is marked in the Markdown with
``<!-- snippet: skip REASON -->`` on the line before its fence, and is skipped with
that reason.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from interface_support import ROOT

DOCS = ("SKILL.md", "README.md")
_FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_SKIP = re.compile(r"<!--\s*snippet:\s*skip\s+(.+?)\s*-->\s*$")

RUNNER = """
import sys
blocks = {blocks!r}
namespace = {{"__name__": "__main__"}}
for line, code in blocks:
    exec(compile(code, f"{doc} snippet at line {{line}}", "exec"), namespace)
print("ran", len(blocks), "snippets")
"""


@dataclass(frozen=True)
class Snippet:
    line: int
    code: str
    skip: str | None


def snippets(doc: str) -> list[Snippet]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = _SKIP.search(before)
        found.append(Snippet(line, match.group(1), skip.group(1) if skip else None))
    return found


@pytest.mark.parametrize("doc", DOCS)
def test_every_python_snippet_runs_as_written(doc: str, tmp_path: Path) -> None:
    found = snippets(doc)
    assert found, f"{doc} has no python snippets"
    runnable = [(s.line, s.code) for s in found if s.skip is None]
    for s in found:
        if s.skip is not None:
            assert len(s.skip) > 10, f"{doc}:{s.line}: say why the snippet is skipped"
    env = {
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "PYTHONPATH": str(ROOT),
        "PATH": "/usr/bin:/bin",
        "ATTESTOR_DISABLE_LOCAL_EMBED": "1",  # no Ollama probe: the bundled model is used
    }
    script = RUNNER.format(blocks=runnable, doc=doc)
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert f"ran {len(runnable)} snippets" in done.stdout
