"""Adversarial finding: two ways the stdio screen answered a bad line wrongly.

A line that is JSON but no JSON-RPC message was answered "not a JSON-RPC message: For
further information visit https://errors.pydantic.dev/..." (the last line of pydantic's
text is a link), which tells a client nothing. And the request id was found by reading
digits, so ``"id": 1e400`` (no valid id) was answered as request 1, which a client
waiting on request 1 would take as its answer. Now the answer names the first problem
("method: Field required"), an id is only a whole integer or a string, and NaN or an
overflowing number is a parse error wherever it stands (a key given twice stays an
invalid-params error).
"""

from __future__ import annotations

import mcp_types as types
import pytest

from attestor_arango.interfaces.mcp_stdio import screen

NOT_MESSAGES = {
    "[]": "Input should be an object",
    '{"jsonrpc": "2.0", "id": 4}': "method: Field required",
    '{"jsonrpc": "2.0", "id": 5, "method": 7}': "method: Input should be a valid string",
}


@pytest.mark.parametrize("line", list(NOT_MESSAGES))
def test_a_line_that_is_no_message_is_answered_with_its_problem(line: str) -> None:
    answer = screen(line)
    assert isinstance(answer, types.JSONRPCError)
    assert answer.error.code == types.INVALID_REQUEST
    assert answer.error.message == f"not a JSON-RPC message: {NOT_MESSAGES[line]}"


@pytest.mark.parametrize("number", ["1e400", "1.5", "12e3", "-7E2"])
def test_a_number_that_is_no_integer_is_no_request_id(number: str) -> None:
    answer = screen(f'{{"jsonrpc": "2.0", "id": {number}, "method": "ping", "x": NaN}}')
    assert isinstance(answer, types.JSONRPCError)
    assert answer.id is None, answer
    assert screen('{"jsonrpc": "2.0", "id": 12, "method": "ping", "x": NaN}').id == 12  # type: ignore[union-attr]


def test_nan_is_a_parse_error_a_repeated_key_invalid_params() -> None:
    nan = screen('{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": NaN}}')
    twice = screen('{"jsonrpc": "2.0", "id": 3, "method": "ping", "method": "ping"}')
    assert isinstance(nan, types.JSONRPCError) and isinstance(twice, types.JSONRPCError)
    assert nan.error.code == types.PARSE_ERROR and "NaN" in nan.error.message
    assert twice.error.code == types.INVALID_PARAMS and "'method' twice" in twice.error.message
