"""The built wheel carries the ArangoDB backend's queries and schema (issue 15, item 0).

The wheel is built from this checkout with the project's own build backend (no network:
``--no-build-isolation``); ``.ci/run`` additionally installs the wheel and the sdist into
fresh venvs outside the checkout and runs ``tests/support/wheel_smoke.py`` there.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attestor_arango.errors import StoreError
from attestor_arango.store.arango import resources
from attestor_arango.store.arango.registry import Registry

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hatchling", reason="the build backend; pip install -e '.[dev]'")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-q", "-w", str(out), str(ROOT)],
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    [built] = out.glob("attestor_arango-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def test_wheel_carries_every_query_and_schema_file(wheel_names: set[str]) -> None:
    queries = sorted((ROOT / "aql").glob("*.aql"))
    schemas = sorted((ROOT / "schemas").glob("*.json"))
    assert len(queries) >= 30 and len(schemas) >= 3
    missing = [
        f"attestor_arango/{p.parent.name}/{p.name}"
        for p in [*queries, *schemas]
        if f"attestor_arango/{p.parent.name}/{p.name}" not in wheel_names
    ]
    assert missing == []


def package_data_files() -> list[str]:
    """Every non-Python file of the package directory (py.typed, prompts, UI templates...)."""
    package = ROOT / "attestor_arango"
    return sorted(
        p.relative_to(ROOT).as_posix()
        for p in package.rglob("*")
        if p.is_file() and p.suffix not in {".py", ".pyc"} and "__pycache__" not in p.parts
    )


def test_wheel_keeps_package_data_and_the_entry_point(wheel: Path, wheel_names: set[str]) -> None:
    data = package_data_files()
    assert "attestor_arango/py.typed" in data and any("/prompts/" in n for n in data)
    assert [n for n in data if n not in wheel_names] == []
    assert "attestor_arango/store/arango/resources.py" in wheel_names
    assert not any(n.startswith(("tests/", "aql/", "schemas/")) for n in wheel_names)
    [entry_points] = [n for n in wheel_names if n.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(wheel) as z:
        scripts = z.read(entry_points).decode("utf-8")
    assert "attestor-arango = attestor_arango.interfaces.cli.main:main" in scripts


def test_a_checkout_reads_the_top_level_directories() -> None:
    assert Path(str(resources.data_dir("aql"))) == ROOT / "aql"
    assert Path(str(resources.data_dir("schemas"))) == ROOT / "schemas"
    assert Registry.load().names() == sorted(p.stem for p in (ROOT / "aql").glob("*.aql"))


def test_missing_data_says_where_it_looked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(resources, "SOURCE_ROOT", tmp_path)
    with pytest.raises(StoreError, match="reinstall") as info:
        resources.data_dir("aql")
    assert str(tmp_path / "aql") in str(info.value)
    with pytest.raises(StoreError, match="unknown data directory"):
        resources.data_dir("../etc")
