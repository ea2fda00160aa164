"""Evidence Board page loads at 100k memories, measured in headless Chromium.

The tenant is filled through ``import_user`` (the public bulk path: one transaction,
batched embedding) with 100,000 memories; the browser then loads each page several
times and the Navigation Timing figures (server response and full load) are written to
``benchmarks/results/ui_page_load.json``. Nothing here asserts a time (figures are
noisy on shared machines); the test asserts that each page is right at that size.
It runs where ``ATTESTOR_UI_SCALE=1``; elsewhere it skips saying so. It is not part of
CI: since every write is in the audit chain, the audit page verifies 100k entries and
their rows on each load, which takes longer than the page timeout (an open defect of
the audit page, see the closing note of session 6).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest

from attestor_arango.config import Config
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.memory import AgentMemory
from attestor_arango.models import content_hash
from tests.interface_support import ROOT, running_server
from tests.test_ui_browser import chromium  # noqa: F401  (the browser fixture)
from tests.ui_seed import KEY_A, keyring

N = int(os.environ.get("ATTESTOR_UI_SCALE_N", "100000"))
REPEATS = 5
OUT = ROOT / "benchmarks" / "results" / "ui_page_load.json"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AgentMemory, str, float]]:
    if not os.environ.get("ATTESTOR_UI_SCALE"):
        pytest.skip("the 100k page-load run is a measurement: set ATTESTOR_UI_SCALE=1 to run it")
    tmp = tmp_path_factory.mktemp("scale")
    memory = AgentMemory(config=Config(path=str(tmp / "big.db")), embedder=HashingEmbedder(64))
    src = AgentContext(agent_id="planner-1", role="orchestrator", tenant="template")
    memory.add("template", tags=["t"], context=src)
    template = memory.export_user("template", context=src)
    row = template["memories"][0]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for i in range(N):
        text = f"Project note {i}: milestone {i % 13} of stream {i % 97} reviewed"
        at = (start + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")
        rows.append(
            {
                **row,
                "id": str(uuid.UUID(int=i + 1, version=4)),
                "tenant": "acme",
                "content": text,
                "content_hash": content_hash(text),
                "entity": f"stream-{i % 1000}",
                "category": f"c{i}",
                "tags": [f"t{i % 5}"],
                "valid_from": at,
                "t_created": at,
            }
        )
    acme = AgentContext(agent_id="planner-1", role="orchestrator", tenant="acme")
    began = time.perf_counter()
    memory.import_user({**template, "tenant": "acme", "memories": rows}, context=acme)
    seeded_s = time.perf_counter() - began
    with running_server(memory, keyring()) as url:
        yield memory, url, seeded_s
    memory.close()


def _timings(page: Any) -> dict[str, float]:
    nav = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return {response: n.responseEnd - n.startTime, load: n.loadEventEnd - n.startTime}; }"
    )
    return {k: float(v) for k, v in nav.items()}


def test_page_loads_at_100k_memories(chromium: Any, big: tuple[AgentMemory, str, float]) -> None:  # noqa: F811
    _, base, seeded_s = big
    last_page = (N + 49) // 50
    pages = {
        "memories (page 1)": f"{base}/ui/memories",
        f"memories (last page, {last_page})": f"{base}/ui/memories?page={last_page}",
        "memories (entity filter)": f"{base}/ui/memories?entity=stream-7",
        "memories (full-text search)": f"{base}/ui/memories?q={quote('milestone stream')}",
        "memories (as of)": f"{base}/ui/memories?as_of=2026-01-01T12:00:00Z",
        "entity timeline (100 versions)": f"{base}/ui/timeline?entity=stream-7",
        "recall explainer": f"{base}/ui/recall?q={quote('milestone 7 of stream 42')}",
        "provenance": f"{base}/ui/memory/{uuid.UUID(int=4242, version=4)}",
        "audit": f"{base}/ui/audit",
    }
    page = chromium.new_page()
    page.set_extra_http_headers({"Authorization": f"Bearer {KEY_A}"})
    results = []
    try:
        for name, url in pages.items():
            runs = []
            for _ in range(REPEATS + 1):
                response = page.goto(url)
                assert response is not None and response.status == 200, (name, page.content())
                runs.append(_timings(page))
            runs = runs[1:]  # the first load warms the server's caches
            results.append(
                {
                    "page": name,
                    "response_ms_median": round(statistics.median(r["response"] for r in runs), 1),
                    "load_ms_median": round(statistics.median(r["load"] for r in runs), 1),
                    "load_ms_max": round(max(r["load"] for r in runs), 1),
                    "loads": len(runs),
                }
            )
            if name == "memories (page 1)":
                assert page.get_by_test_id("total").inner_text() == str(N)
                assert page.locator("[data-testid=memories] tbody tr").count() == 50
            if name.startswith("entity timeline"):
                assert page.locator("[data-testid=versions] > li").count() == N // 1000
    finally:
        page.close()
    report = {
        "memories": N,
        "seed_import_s": round(seeded_s, 1),
        "browser": "Debian chromium (headless), Playwright",
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "note": "Navigation Timing: response = request start to last byte; load = to the "
        "load event. Median of 5 loads after one warm-up; the machine is shared.",
        "pages": results,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
