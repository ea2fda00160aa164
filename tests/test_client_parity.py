"""Parity: every public AgentMemory method reaches MemoryClient and a REST route, unchanged.

These fail as soon as someone adds a public method to AgentMemory without
mapping it, or changes a signature on one side only.
"""

from __future__ import annotations

import inspect
import typing

import pytest

from attestor_arango.interfaces.api import codec, spec
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

MEMORY_METHODS = spec.public_methods(AgentMemory)
REMOTE_METHODS = [m for m in MEMORY_METHODS if m not in spec.LOCAL_ONLY]


def _sentinel(value: object) -> bool:
    """A default that only means "not given" (e.g. a private object())."""
    return type(value) is object


def test_agent_memory_has_the_core_methods() -> None:
    # guards the parametrisation below against an empty list
    assert {"add", "get", "recall", "forget", "stats", "health"} <= set(MEMORY_METHODS)


@pytest.mark.parametrize("name", MEMORY_METHODS)
def test_client_has_every_public_method(name: str) -> None:
    assert callable(getattr(MemoryClient, name, None)), f"MemoryClient lacks {name}"


@pytest.mark.parametrize("name", REMOTE_METHODS)
def test_signatures_match(name: str) -> None:
    theirs = inspect.signature(getattr(AgentMemory, name)).parameters
    ours = inspect.signature(getattr(MemoryClient, name)).parameters
    assert list(ours) == list(theirs), f"{name}: parameter names or order differ"
    for pname, param in theirs.items():
        mine = ours[pname]
        assert mine.kind == param.kind, f"{name}({pname}): positional/keyword kind differs"
        if _sentinel(param.default):
            assert _sentinel(mine.default), f"{name}({pname}): needs an 'unset' sentinel"
        else:
            assert mine.default == param.default, f"{name}({pname}): default differs"


@pytest.mark.parametrize("name", REMOTE_METHODS)
def test_return_types_match(name: str) -> None:
    theirs = codec.type_hints(getattr(AgentMemory, name)).get("return")
    ours = typing.get_type_hints(getattr(MemoryClient, name)).get("return")
    assert theirs is not None
    assert ours == theirs, f"{name}: client returns {ours}, AgentMemory returns {theirs}"


@pytest.mark.parametrize("name", REMOTE_METHODS)
def test_every_method_has_a_rest_route(name: str) -> None:
    assert name in spec.ROUTES_BY_OP, f"no REST route for AgentMemory.{name}"


def test_routes_are_unique_and_versioned() -> None:
    seen = {(r.method, r.full_path) for r in spec.ROUTES}
    assert len(seen) == len(spec.ROUTES)
    assert all(r.full_path.startswith("/v1/") for r in spec.ROUTES)
    for route in spec.ROUTES:
        for name in route.path_params:
            assert "{" + name + "}" in route.path


def test_parity_check_detects_a_missing_method() -> None:
    """The check itself can fail: a class with an extra public method is caught."""

    class Extended(AgentMemory):
        def brand_new_operation(self) -> None:
            """Not mapped anywhere."""

    missing = [m for m in spec.public_methods(Extended) if not hasattr(MemoryClient, m)]
    assert missing == ["brand_new_operation"]
