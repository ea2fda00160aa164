"""``import attestor_arango.client`` loads the client, its wire formats and the data model only.

A process that only talks to a remote memory must not pay for (or depend on) the
store, numpy, the signing library or the ingest engines.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import attestor_arango.client
print(json.dumps(sorted(sys.modules)))
"""

NEVER = ("numpy", "cryptography", "snowballstemmer", "starlette", "uvicorn", "mcp", "arango")
NEVER_OURS = (
    "attestor_arango.memory",
    "attestor_arango.store",
    "attestor_arango.core",
    "attestor_arango.embeddings",
    "attestor_arango.retrieval.pipeline",
    "attestor_arango.ingest.pipeline",
    "attestor_arango.governance",
)


def test_the_client_imports_no_server_code_and_no_numpy() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout)
    assert "attestor_arango.interfaces.client" in loaded  # the probe imported the client
    assert [m for m in loaded if m.split(".")[0] in NEVER] == []
    assert [m for m in loaded if m.startswith(NEVER_OURS)] == []
