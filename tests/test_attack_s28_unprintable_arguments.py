"""Session 28 attack: arguments too large or too deep to print escaped as untyped errors.

In process, a caller can hand ``AgentMemory`` values no JSON body carries: an integer of
5,000 digits (``repr`` refuses past ``sys.get_int_max_str_digits``, a ``ValueError``), one
too large for a float (``OverflowError``), a list or dict nested 5,000 deep (``repr`` and
``json.dumps`` raise ``RecursionError``). Each reached a message that quoted the value, or
a digest that encoded it, before any check: the caller got a bare ``ValueError``,
``OverflowError`` or ``RecursionError``, not the ``ValidationError`` the README promises
for bad input ("Catch ``AttestorError`` for everything the package raises on purpose;
anything else is a bug"). Every one is now a ``ValidationError`` that names the value's
type, and nothing is stored.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from attack_support import CTX, seeded, stored

from attestor_arango import AgentContext
from attestor_arango.errors import ValidationError, shown
from attestor_arango.memory import AgentMemory

HUGE = 10**5000  # more digits than repr() prints (sys.get_int_max_str_digits: 4300)


def _deep_list(n: int = 5000) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


def _deep_dict(n: int = 5000) -> Any:
    value: Any = 1
    for _ in range(n):
        value = {"a": value}
    return value


Call = Callable[[AgentMemory, Any], Any]
CALLS: dict[str, Call] = {
    "add confidence": lambda m, v: m.add("Ann is here", confidence=v, context=CTX),
    "add valid_from": lambda m, v: m.add("Ann is here", valid_from=v, context=CTX),
    "add a tag": lambda m, v: m.add("Ann is here", tags=[v], context=CTX),
    "add tags": lambda m, v: m.add("Ann is here", tags=v, context=CTX),
    "list as_of": lambda m, v: m.list(as_of=v, context=CTX),
    "list time_window": lambda m, v: m.list(time_window=(v, v), context=CTX),
    "list offset": lambda m, v: m.list(offset=v, context=CTX),
    "list namespace": lambda m, v: m.list(namespace=v, context=CTX),
    "list_page namespace": lambda m, v: m.list_page(namespace=v, context=CTX),
    "list_page tags": lambda m, v: m.list_page(tags=v, context=CTX),
    "audit_log after_seq": lambda m, v: m.audit_log(after_seq=v, context=CTX),
    "export_user subject": lambda m, v: m.export_user(v, context=CTX),
    "set_quota subject": lambda m, v: m.set_quota(v, daily_writes=1, context=CTX),
    "set_quota user_id beside user": lambda m, v: m.set_quota(
        "acme", user_id=v, daily_writes=1, context=CTX
    ),
    "compact older_than": lambda m, v: m.compact(older_than=v, dry_run=True, context=CTX),
    "apply_retention dry_run": lambda m, v: m.apply_retention([], dry_run=v, context=CTX),
    "reflect store": lambda m, v: m.reflect(store=v, context=CTX),
    "verify_audit_chain anchor": lambda m, v: m.verify_audit_chain(
        anchor=(v, "a" * 64), context=CTX
    ),
    "a context's role": lambda m, v: m.list(
        context=AgentContext(agent_id="a", role=v, tenant="acme")
    ),
    "a child's role": lambda m, v: m.list(context=CTX.as_agent("helper", role=v)),
}
VALUES: dict[str, Callable[[], Any]] = {
    "a 5000-digit integer": lambda: HUGE,
    "a negative 5000-digit integer": lambda: -HUGE,
    "a list 5000 deep": _deep_list,
    "a dict 5000 deep": _deep_dict,
}


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("call", list(CALLS))
def test_an_unprintable_argument_is_a_validation_error_and_stores_nothing(
    tmp_path: Path, call: str, value: str
) -> None:
    mem, _, _ = seeded(tmp_path / "m.db")
    before = stored(mem, with_audit=False)

    with pytest.raises(ValidationError):
        CALLS[call](mem, VALUES[value]())

    assert stored(mem, with_audit=False) == before
    mem.close()


def test_shown_names_what_it_cannot_print_and_cuts_what_it_can() -> None:
    assert shown(HUGE) == "(an int too large to print)"
    assert shown(_deep_list(sys.getrecursionlimit() + 10)) == "(a list too large to print)"
    assert shown("x" * 100, width=10) == "'xxxxxx..."
    assert shown("ann") == "'ann'"


@pytest.mark.parametrize("where", ["a field", "the whole value"])
def test_a_langgraph_value_nested_5000_deep_is_a_validation_error(
    tmp_path: Path, where: str
) -> None:
    """The LangGraph store walked a put's value for its text before anything checked it
    (``_content``): 5,000 levels raised ``RecursionError``. The value rides in metadata, so
    it now meets metadata's depth check first."""
    from attestor_arango.interfaces.langgraph import AttestorStore

    mem, _, _ = seeded(tmp_path / "m.db")
    store = AttestorStore(mem, CTX)
    before = stored(mem, with_audit=False)
    value = {"text": "x", "v": _deep_dict()} if where == "a field" else _deep_dict()

    with pytest.raises(ValidationError, match="nest"):
        store.put(("users", "ann"), "k", value)

    assert stored(mem, with_audit=False) == before
    mem.close()
