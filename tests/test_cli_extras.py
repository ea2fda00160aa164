"""Issue 18 item 3: `api` and `mcp` without their extras name the one command that fixes it.

The subprocess runs with a ``sitecustomize`` that makes the extras' modules unimportable,
as in a plain ``pip install attestor-arango`` (the fresh-venv step of .ci/run checks the
real plain install too).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from interface_support import PYTHON, cli_env

BLOCKER = """
import sys


class _Missing:
    blocked = {blocked!r}

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _Missing())
"""


def _run(tmp_path: Path, blocked: set[str], *args: str) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=sorted(blocked)))
    env = cli_env(tmp_path)
    env["PYTHONPATH"] = f"{site}:{env['PYTHONPATH']}"
    return subprocess.run(
        [PYTHON, "-m", "attestor_arango.interfaces.cli.main", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "blocked", "extra"),
    [
        (("api", "--no-auth"), {"uvicorn"}, "server"),
        (("api", "--no-auth"), {"starlette"}, "server"),
        (("mcp",), {"mcp"}, "mcp"),
    ],
)
def test_a_missing_extra_is_one_install_command_not_a_traceback(
    tmp_path: Path, args: tuple[str, ...], blocked: set[str], extra: str
) -> None:
    done = _run(tmp_path, blocked, *args)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"pip install 'attestor-arango[{extra}]'" in done.stderr
    assert "missing_extra" in done.stderr


def test_json_error_names_the_extra(tmp_path: Path) -> None:
    done = _run(tmp_path, {"mcp"}, "mcp", "--json")
    assert '"code": "missing_extra"' in done.stderr
    assert "pip install 'attestor-arango[mcp]'" in done.stderr
