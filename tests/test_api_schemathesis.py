"""Schemathesis fuzzes every operation of the served OpenAPI document (bounded examples).

The schemathesis pytest plugin does not run under pytest 9, so each operation's
case strategy (positive and negative data) is driven by hypothesis directly.

Properties: no 5xx ever; every rejection is a ``{code, message, details}`` body and
leaves the store unchanged; nothing a tenant-acme key sends changes tenant beta.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interface_support import fingerprint, keyring, running_server
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance

from attestor_arango.clock import ManualClock
from attestor_arango.context import AgentContext
from attestor_arango.embeddings import HashingEmbedder
from attestor_arango.ids import SeededIdSource
from attestor_arango.interfaces.api import spec
from attestor_arango.memory import AgentMemory

STATE: dict[str, Any] = {}
MAX_EXAMPLES = 12  # per operation, both positive and negative data: bounded so CI stays fast


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    memory = AgentMemory(
        tmp_path_factory.mktemp("fuzz") / "fuzz.db",
        embedder=HashingEmbedder(64),
        clock=ManualClock(),
        ids=SeededIdSource(3),
    )
    for tenant in ("acme", "beta"):
        ctx = AgentContext(agent_id="seed", role="orchestrator", tenant=tenant)
        memory.add(
            f"{tenant} keeps its servers in Paris", entity="servers", category="site", context=ctx
        )
    ring, plain = keyring()
    with running_server(memory, ring) as url:
        STATE.update(
            memory=memory, headers={"authorization": f"Bearer {plain['acme-orchestrator']}"}
        )
        yield schemathesis.openapi.from_url(f"{url}/openapi.json")
    memory.close()


MOUNTED = [r for r in spec.ROUTES if callable(getattr(AgentMemory, r.op, None))]


def check_case(case: Any) -> None:
    memory: AgentMemory = STATE["memory"]
    before = fingerprint(memory, "acme")
    other = fingerprint(memory, "beta")
    response = case.call(headers=STATE["headers"])
    assert response.status_code < 500, f"{case.method} {case.path}: {response.text[:500]}"
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"code", "message", "details"}, body
        assert fingerprint(memory, "acme") == before, f"rejected {body['code']} changed the store"
    else:
        case.validate_response(response, checks=[response_schema_conformance])
    assert fingerprint(memory, "beta") == other


@pytest.mark.parametrize("route", MOUNTED, ids=[r.op for r in MOUNTED])
def test_fuzzed_requests_never_5xx_and_rejections_change_nothing(
    api_schema: Any, route: spec.Route
) -> None:
    operation = api_schema.find_operation_by_label(f"{route.method} {route.full_path}")
    assert operation is not None, f"{route.op} is missing from the OpenAPI document"
    strategy = st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
    )

    @given(case=strategy)
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: Any) -> None:
        check_case(case)

    fuzz()
