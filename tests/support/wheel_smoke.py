"""Smoke test of an installed (non-editable) attestor-arango, run from outside the checkout.

Usage (``.ci/run`` does this for the wheel and for the sdist, each in a fresh venv)::

    <venv>/bin/python tests/support/wheel_smoke.py <checkout>

It fails (exit 1, one line per problem) unless: the package imports from the venv, not the
checkout; ``Registry.load()`` finds every ``aql/*.aql`` of the checkout inside the installed
package; ``load_schema()`` reads the packaged ``schemas/``; the packaged prompts and
``py.typed`` are there; ``attestor-arango demo`` runs; and ``attestor-arango init --backend
arangodb`` against an unreachable URL fails with a clear message and creates no file.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def check_package(checkout: Path) -> list[str]:
    """Imports, data files and query/schema loading of the installed package."""
    import attestor_arango
    from attestor_arango.store.arango.registry import Registry
    from attestor_arango.store.arango.resources import data_dir
    from attestor_arango.store.arango.schema import load_schema

    problems: list[str] = []
    package = Path(attestor_arango.__file__).resolve().parent
    if checkout in package.parents:
        problems.append(f"attestor_arango imported from the checkout ({package}), not the venv")
    for name in ("aql", "schemas"):
        where = Path(str(data_dir(name))).resolve()
        if where.parent != package:
            problems.append(f"{name}/ resolved to {where}, not inside the package {package}")
    registry = Registry.load()
    expected = sorted(p.stem for p in (checkout / "aql").glob("*.aql"))
    if registry.names() != expected:
        missing = sorted(set(expected) - set(registry.names()))
        problems.append(f"Registry.load() lacks queries {missing} (has {len(registry.names())})")
    schema = load_schema()
    want = json.loads((checkout / "schemas" / "collections.json").read_text(encoding="utf-8"))
    if [c["name"] for c in schema["collections"]] != [c["name"] for c in want["collections"]]:
        problems.append("load_schema() collections differ from the checkout's schemas/")
    if not schema["views"] or not schema["vector"].get("index"):
        problems.append("load_schema() returned no views or no vector index spec")
    source = checkout / "attestor_arango"
    data = sorted(
        p.relative_to(source).as_posix()
        for p in source.rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
    )
    lost = [name for name in data if not (package / name).is_file()]
    if not data or lost:
        problems.append(f"package data missing from the installed package: {lost}")
    return problems


def check_cli(bin_dir: Path) -> list[str]:
    """The console script: the demo, and init against an unreachable ArangoDB."""
    problems: list[str] = []
    cli = str(bin_dir / "attestor-arango")
    with tempfile.TemporaryDirectory(prefix="attestor-smoke-") as tmp:
        root = Path(tmp)
        home, work, demo = root / "home", root / "work", root / "demo"
        for d in (home, work, demo):
            d.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ATTESTOR_", "ARANGO_"))}
        env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "NO_COLOR": "1"})
        done = subprocess.run(
            [cli, "demo", "--path", str(demo), "--json"],
            cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            problems.append(f"demo exited {done.returncode}: {done.stderr.strip()[-400:]}")
        env["ARANGO_URL"] = f"http://127.0.0.1:{_closed_port()}"
        before = _files_under(root)
        done = subprocess.run(
            [cli, "init", "--backend", "arangodb"],
            cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        message = done.stderr.strip()
        if done.returncode == 0:
            problems.append("init against an unreachable ArangoDB exited 0")
        if "Traceback" in message or "cannot open ArangoDB" not in message:
            problems.append(f"init's failure message is not the clear one: {message[-400:]!r}")
        if "ARANGO_URL" not in message:
            problems.append("init's failure message does not say to check ARANGO_URL")
        created = sorted(set(_files_under(root)) - set(before))
        if created:
            problems.append(f"init against an unreachable ArangoDB created {created}")
    return problems


def main(argv: list[str]) -> int:
    checkout = Path(argv[1]).resolve()
    problems = check_package(checkout) + check_cli(Path(sys.executable).parent)
    for problem in problems:
        print(f"wheel smoke: {problem}", file=sys.stderr)
    print("wheel smoke: ok" if not problems else f"wheel smoke: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
