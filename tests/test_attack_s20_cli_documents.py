"""Session 20 attack battery: the files the CLI reads were read as YAML 1.1, JSON included.

``export --output`` writes JSON, and ``import`` read it back through the YAML reader,
which takes a number in exponent notation without a dot (``1e-05``, ``1e+20``: how JSON
writers print small and large floats) as text: an export imported into another tenant
stored ``"1e-05"`` where the exported memory held the number 1e-05, so a round trip
changed the data. A file nested deeper than the reader's recursion (an import, a policy,
a key or a config file) ended the CLI with a traceback. A document that is JSON is now
read as JSON (``jsontext.load_json``, as ``$ATTESTOR_API_KEYS`` already was), YAML's
flow style still as YAML, and nesting too deep for either is a typed error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attestor_arango.config import load_yaml
from attestor_arango.errors import ValidationError
from attestor_arango.governance.retention import load_policies
from attestor_arango.interfaces.cli.main import main

METADATA = {"ratio": 0.00001, "big": 1e20, "plain": 2.5, "count": 3}


def _cli(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> tuple[int, str]:
    """The exit code and what was printed (an answer on stdout, an error on stderr)."""
    code = main(["--json", *args, "--path", str(db)])
    printed = capsys.readouterr()
    return code, printed.out if code == 0 else printed.err


def test_an_export_imported_into_another_tenant_keeps_its_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    db, exported = tmp_path / "m.db", tmp_path / "e.json"
    meta = json.dumps(METADATA)
    assert _cli(capsys, db, "add", "Ann likes tea", "--metadata", meta, "--tenant", "one")[0] == 0
    assert _cli(capsys, db, "export", "--tenant", "one", "--output", str(exported))[0] == 0
    assert "1e-05" in exported.read_text()  # the premise: JSON's spelling of the number
    assert _cli(capsys, db, "import", str(exported), "--tenant", "two")[0] == 0

    code, out = _cli(capsys, db, "list", "--tenant", "two")

    assert code == 0
    (row,) = json.loads(out)
    assert {k: v for k, v in row["metadata"].items() if k in METADATA} == METADATA


@pytest.mark.parametrize(
    "text",
    [
        '{"a": ' * 100_000 + "1" + "}" * 100_000,
        "- " * 100_000 + "1",
        "[" * 100_000 + "1" + "]" * 100_000,
    ],
    ids=["json", "yaml", "json-list"],
)
def test_a_file_nested_too_deeply_is_a_typed_error_and_stores_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
) -> None:
    monkeypatch.setenv("ATTESTOR_EMBEDDER", "hashing")
    db, deep = tmp_path / "m.db", tmp_path / "deep.json"
    assert _cli(capsys, db, "add", "Ann likes tea")[0] == 0
    deep.write_text(text)
    for args in (("import", str(deep)), ("retention", "--policies", str(deep))):
        code, out = _cli(capsys, db, *args)
        assert code != 0
        assert json.loads(out)["error"]["code"] == "invalid_input"
    code, out = _cli(capsys, db, "list")
    assert [m["content"] for m in json.loads(out)] == ["Ann likes tea"]


def test_yaml_flow_style_is_still_yaml() -> None:
    assert load_yaml("{name: tidy, older_than: 1e3}") == {"name": "tidy", "older_than": "1e3"}
    assert load_yaml('{"name": "tidy", "older_than": 1e3}') == {"name": "tidy", "older_than": 1e3}
    with pytest.raises(ValidationError, match="twice"):
        load_yaml('{"a": 1, "a": 2}')


def test_retention_policies_given_as_json_text_are_named_in_the_error() -> None:
    with pytest.raises(ValidationError, match="retention policies") as err:
        load_policies('[{"name": "tidy", "name": "other"}]')
    assert "twice" in str(err.value)
