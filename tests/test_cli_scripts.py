"""The CLI in scripts and pipes, through a subprocess: what lands in a pipe or a file is
JSON, a closed pipe ends quietly, global flags on both sides, help that names defaults,
and a terminal table that fits 80 columns."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from interface_support import PYTHON, cli_env

from attestor_arango.config import load_config
from attestor_arango.interfaces.cli.main import build_parser
from attestor_arango.memory import AgentMemory

CLI = [PYTHON, "-m", "attestor_arango.interfaces.cli.main"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def run(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI with stdout and stderr on pipes (as in any script)."""
    return subprocess.run(
        [*CLI, *args], env=cli_env(home, **env), capture_output=True, text=True, timeout=120
    )


def fill(home: Path, n: int) -> None:
    """n memories in the SOLO scope the CLI uses, written through the library."""
    mem = AgentMemory(config=load_config(path=str(home / "memory.db"), embedder="hashing"))
    try:
        for i in range(n):
            mem.add(f"note number {i} about the payments service and its deploys", entity=f"e{i}")
    finally:
        mem.close()


def test_export_redirected_to_a_file_is_json_that_import_reads(tmp_path: Path) -> None:
    assert run(tmp_path, "add", "Bob likes tea", "--entity", "Bob").returncode == 0
    dump = tmp_path / "f.json"
    with dump.open("w", encoding="utf-8") as sink:
        done = subprocess.run(
            [*CLI, "export"], env=cli_env(tmp_path), stdout=sink, stderr=subprocess.PIPE, text=True
        )
    assert done.returncode == 0, done.stderr
    data = json.loads(dump.read_text(encoding="utf-8"))
    assert [m["content"] for m in data["memories"]] == ["Bob likes tea"]
    assert run(tmp_path, "purge", "--reason", "test", "--yes").returncode == 0
    restored = run(tmp_path, "import", str(dump))
    assert restored.returncode == 0, restored.stderr
    listed = json.loads(run(tmp_path, "list").stdout)  # a pipe: JSON without --json
    assert [m["content"] for m in listed] == ["Bob likes tea"]


def test_json_piped_into_head_exits_quietly(tmp_path: Path) -> None:
    fill(tmp_path, 300)  # ~200 KB of JSON: more than a pipe buffer holds
    producer = subprocess.Popen(
        [*CLI, "list", "--json", "--limit", "1000"],
        env=cli_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert producer.stdout is not None and producer.stderr is not None
    head = subprocess.run(["head", "-n", "3"], stdin=producer.stdout, capture_output=True)
    producer.stdout.close()
    err = producer.stderr.read().decode()
    code = producer.wait(timeout=120)
    assert head.stdout.startswith(b"[")
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert err == ""
    assert code == 141


def test_as_of_takes_epoch_seconds(tmp_path: Path) -> None:
    before = int(time.time()) - 5
    added = json.loads(run(tmp_path, "add", "Ana lives in Porto", "--entity", "Ana").stdout)
    created = datetime.fromisoformat(added["t_created"].replace("Z", "+00:00")).timestamp()
    time.sleep(max(0.0, int(created) + 1.1 - time.time()))  # a whole second after it
    after = int(created) + 1
    then = run(tmp_path, "list", "--as-of", str(before))
    assert then.returncode == 0, then.stderr
    assert json.loads(then.stdout) == []
    now = run(tmp_path, "list", "--as-of", str(after))
    assert [m["id"] for m in json.loads(now.stdout)] == [added["id"]]
    got = run(tmp_path, "get", added["id"], "--as-of", f"{created:.6f}")
    assert got.returncode == 0 and json.loads(got.stdout)["id"] == added["id"]


def test_json_and_config_on_both_sides_of_the_subcommand(tmp_path: Path) -> None:
    config = tmp_path / "other.yaml"
    config.write_text(yaml.safe_dump({"path": str(tmp_path / "other.db")}), encoding="utf-8")
    before = run(tmp_path, "--config", str(config), "add", "in the other store")
    assert before.returncode == 0, before.stderr
    after = run(tmp_path, "list", "--config", str(config))
    assert [m["content"] for m in json.loads(after.stdout)] == ["in the other store"]
    assert json.loads(run(tmp_path, "list").stdout) == []  # the default store is untouched
    left = run(tmp_path, "--json", "stats", "--config", str(config))
    right = run(tmp_path, "stats", "--json", "--config", str(config))
    assert left.returncode == right.returncode == 0
    assert json.loads(left.stdout)["total"] == json.loads(right.stdout)["total"] == 1
    missing = run(tmp_path, "--json", "get", "no-such-id")
    assert missing.returncode == 3 and json.loads(missing.stderr)["error"]["code"] == "not_found"


def test_init_json_demo_json_and_version(tmp_path: Path) -> None:
    init = run(tmp_path, "init", "--json")
    assert init.returncode == 0, init.stderr
    assert json.loads(init.stdout)["backend"] == "embedded"
    demo = run(tmp_path, "demo", "--json", "--path", str(tmp_path / "demo"))
    assert demo.returncode == 0, demo.stderr
    payload: dict[str, Any] = json.loads(demo.stdout)  # the whole of stdout is the JSON
    assert payload["reviewer_refused"] is True
    version = run(tmp_path, "--version")
    assert version.returncode == 0
    assert re.fullmatch(r"attestor-arango \d+\.\d+\.\d+\S*\n", version.stdout)


def test_every_option_has_help_and_shows_its_default(tmp_path: Path) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, command in sub.choices.items():  # type: ignore[attr-defined]
        for action in command._actions:
            if action.option_strings and action.dest != "help":
                assert action.help, f"{name} {action.option_strings} has no help"
    shown = run(tmp_path, "add", "--help").stdout
    assert re.search(r"--confidence CONFIDENCE\s+belief in the fact, 0-1 \(default: 1\.0\)", shown)
    api = " ".join(run(tmp_path, "api", "--help").stdout.split())
    assert "address to bind (default: 127.0.0.1)" in api and "TCP port (default: 8080)" in api


def read_terminal(home: Path, *args: str, columns: int = 80) -> str:
    """Runs the CLI on a pseudo-terminal of ``columns`` columns; returns what it showed."""
    master, slave = pty.openpty()
    env = cli_env(home, COLUMNS=str(columns), LINES="50", TERM="xterm")
    proc = subprocess.Popen([*CLI, *args], env=env, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(master)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace")).replace("\r", "")


def test_a_terminal_gets_a_table_that_fits_80_columns(tmp_path: Path) -> None:
    added = json.loads(
        run(
            tmp_path,
            "add",
            "The payments service is written in Go and deployed every Friday afternoon",
            "--entity",
            "payments",
            "--category",
            "language",
        ).stdout
    )
    shown = read_terminal(tmp_path, "list")
    lines = shown.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, shown
    assert added["id"][-8:] in shown  # the short id, on one line
    assert not shown.lstrip().startswith("[")  # a table, not JSON


def test_short_ids_as_tables_show_them_are_accepted_and_ambiguity_is_named(
    tmp_path: Path,
) -> None:
    first = json.loads(run(tmp_path, "add", "Ana lives in Porto").stdout)
    second = json.loads(run(tmp_path, "add", "Bob lives in Faro").stdout)
    got = run(tmp_path, "get", first["id"][-8:])  # the form tables show
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["id"] == first["id"]
    assert json.loads(run(tmp_path, "get", second["id"][:-4].upper()).stdout)["id"] == second["id"]
    shared = next(
        first["id"][:n] for n in range(36, 0, -1) if second["id"].startswith(first["id"][:n])
    )
    assert len(shared) >= 4  # UUIDv7: both start with the same milliseconds
    ambiguous = run(tmp_path, "get", shared[:8])
    assert ambiguous.returncode == 2
    assert first["id"] in ambiguous.stderr and second["id"] in ambiguous.stderr
    assert run(tmp_path, "get", "ffffffff").returncode == 3
    other = run(tmp_path, "get", first["id"][-8:], "--tenant", "someone-else")
    assert other.returncode == 3  # another tenant's short id is not found
    forgotten = run(tmp_path, "forget", second["id"][-8:], "--reason", "moved")
    assert forgotten.returncode == 0, forgotten.stderr
    assert json.loads(forgotten.stdout)["status"] == "archived"


def test_import_into_another_tenant_rekeys_and_keeps_provenance(tmp_path: Path) -> None:
    tea = json.loads(
        run(tmp_path, "add", "Bob likes tea", "--entity", "Bob", "--category", "d").stdout
    )
    coffee = json.loads(
        run(tmp_path, "add", "Bob likes coffee", "--entity", "Bob", "--category", "d").stdout
    )
    dump = tmp_path / "f.json"
    dump.write_text(run(tmp_path, "export").stdout, encoding="utf-8")
    copied = run(tmp_path, "import", str(dump), "--tenant", "other")
    assert copied.returncode == 0, copied.stderr
    assert json.loads(copied.stdout)["rekeyed"] == 1
    copy = json.loads(run(tmp_path, "timeline", "Bob", "--tenant", "other").stdout)
    assert [m["content"] for m in copy] == ["Bob likes tea", "Bob likes coffee"]
    assert {m["id"] for m in copy}.isdisjoint({tea["id"], coffee["id"]})
    assert [m["metadata"]["imported_from"] for m in copy] == [
        {"tenant": "local", "id": tea["id"]},
        {"tenant": "local", "id": coffee["id"]},
    ]
    assert copy[1]["supersedes"] == copy[0]["id"] and copy[0]["superseded_by"] == copy[1]["id"]
    assert [m["t_created"] for m in copy] == [tea["t_created"], coffee["t_created"]]
    assert copy[1]["provenance"]["agent_id"] == coffee["provenance"]["agent_id"]
    source = json.loads(run(tmp_path, "timeline", "Bob").stdout)
    assert [m["id"] for m in source] == [tea["id"], coffee["id"]]  # the source is untouched
    again = run(tmp_path, "import", str(dump), "--tenant", "other")
    assert again.returncode == 1 and "UNIQUE" not in again.stderr
    assert "already holds data" in again.stderr


def imported_modules(home: Path, *args: str) -> set[str]:
    """The modules one CLI call imported (``python -X importtime``), default embedder."""
    env = cli_env(home, ATTESTOR_EMBEDDER="auto", ATTESTOR_DISABLE_LOCAL_EMBED="1")
    done = subprocess.run(
        [PYTHON, "-X", "importtime", *CLI[1:], *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


def test_commands_that_never_embed_never_load_the_model(tmp_path: Path) -> None:
    for command in (["list"], ["stats"], ["timeline", "Ana"], ["--version"]):
        loaded = imported_modules(tmp_path, *command)
        assert "onnxruntime" not in loaded, command
    recall = imported_modules(tmp_path, "recall", "where does Ana live")
    assert "attestor_arango.embeddings.local" in recall  # recall does build the embedder
