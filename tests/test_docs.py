"""Every public method says what it does and what it raises.

A method without a docstring is a method whose contract lives only in its code;
for the public API that is a defect, so these tests fail on it.
"""

from __future__ import annotations

import inspect

import pytest

from attestor_arango import errors
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.memory import AgentMemory

MEMORY = spec.public_methods(AgentMemory)
CLIENT = [m for m in spec.public_methods(MemoryClient) if m in MEMORY]
ERROR_NAMES = {name for name, value in vars(errors).items() if isinstance(value, type)}


def test_the_lists_are_not_empty() -> None:
    assert {"add", "recall", "purge_user"} <= set(MEMORY)
    assert {"add", "recall", "purge_user"} <= set(CLIENT)


@pytest.mark.parametrize("name", MEMORY)
def test_every_public_method_of_agent_memory_has_a_docstring(name: str) -> None:
    doc = inspect.getdoc(getattr(AgentMemory, name))
    assert doc and len(doc) > 20, f"AgentMemory.{name} needs a docstring"


@pytest.mark.parametrize("name", [m for m in MEMORY if m not in spec.LOCAL_ONLY])
def test_every_remote_method_documents_what_it_raises(name: str) -> None:
    """Each names an error class; the module docstring gives the hierarchy they belong to."""
    for owner in (AgentMemory, MemoryClient):
        if not hasattr(owner, name):
            continue  # a method the client lacks fails test_client_parity.py instead
        doc = inspect.getdoc(getattr(owner, name)) or ""
        named = {word.strip("`.,;:()") for word in doc.split()} & ERROR_NAMES
        assert named, f"{owner.__name__}.{name}: say which errors it raises"


@pytest.mark.parametrize("name", CLIENT)
def test_every_client_method_has_a_docstring(name: str) -> None:
    assert inspect.getdoc(getattr(MemoryClient, name)), f"MemoryClient.{name} needs a docstring"


def test_the_error_hierarchy_is_drawn_in_the_errors_module() -> None:
    doc = errors.__doc__ or ""
    for name in ERROR_NAMES - {"Any"}:
        if issubclass(getattr(errors, name), Exception):
            assert name in doc, f"errors.py's docstring does not draw {name}"
