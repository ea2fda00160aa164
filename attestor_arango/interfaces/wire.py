"""The client side of the wire: headers, requests and typed results, for both clients.

``MemoryClient`` and ``AsyncMemoryClient`` differ only in how they send; what they send
(the route ``api.spec`` names, the arguments that differ from the defaults, the context
headers) and how they read the answer (the same model, or the same typed exception the
server raised) is here, once.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from attestor_arango.context import AgentContext
from attestor_arango.errors import AttestorError, StoreError, ValidationError, shown
from attestor_arango.interfaces.api import codec, spec
from attestor_arango.interfaces.api.errors import error_from_payload
from attestor_arango.validation import check_metadata

HTTP = TypeVar("HTTP", httpx.Client, httpx.AsyncClient)


def context_headers(ctx: AgentContext | None) -> dict[str, str]:
    """The headers that ask the server to act as ``ctx`` (it checks them against the key)."""
    if ctx is None:
        return {}
    headers = {
        spec.H_AGENT: ctx.agent_id,
        spec.H_ROLE: ctx.role.value,
        spec.H_TENANT: ctx.tenant,
        spec.H_NAMESPACE: ctx.namespace,
        spec.H_BUDGET: str(ctx.token_budget),
    }
    if ctx.session_id:
        headers[spec.H_SESSION] = ctx.session_id
    if ctx.read_only:
        headers[spec.H_READ_ONLY] = "true"
    trail = [a for a in ctx.agent_trail if a != ctx.agent_id]
    if trail:
        headers[spec.H_TRAIL] = ",".join(trail)
    return headers


def _sendable(op: str, value: Any) -> Any:
    """``codec.jsonable(value)``; raises ``ValidationError`` for a value nested too deeply
    to convert (the conversion recurses), as the server would refuse it, not
    ``RecursionError``, for bytes (sent as the text "b'...'" before: stored as such), and
    for what ``AgentMemory`` refuses that the conversion would make valid (``_unlike_library``,
    ``_metadata_checked``: read on ``value`` as given, after the conversion has refused
    bytes and too deep a value in its own words)."""
    _unlike_library(op, value)
    try:
        data = codec.jsonable(value)
    except RecursionError:
        raise _too_deep(op) from None
    except TypeError as exc:  # bytes: the library refuses them as text too
        raise ValidationError(f"{op}: {exc}") from None
    if isinstance(value, Mapping):
        _metadata_checked(value)
    return data


# what a call's arguments may hold as they are given: JSON's own values, a time (the
# library reads an aware datetime where it takes a time), bytes (refused by
# ``codec.jsonable`` in its own words), and containers and models walked through
_LEAVES = (str, int, float, bool, type(None), datetime, bytes, bytearray, memoryview)


def _unlike_library(op: str, value: Any) -> None:
    """Raises ``ValidationError`` for what ``AgentMemory`` refuses and ``codec.jsonable``
    would make valid: a set or frozenset anywhere (a set has no order the stored bytes
    could keep; it became a sorted list), a mapping key that is not a string (it became
    its ``str()``), and a value of no JSON type (a path, a Decimal, a UUID, a date, an
    enum, a numpy integer, any object: it became its ``str()`` or ``item()``, so an entity
    "/x" or an as_of "2026-01-01" reached the server). Walked without recursion, each
    container once (a shared one is not walked again); a pydantic model (a
    ``ConversationTurn``) was checked by the library when it was made."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, set | frozenset):
            raise ValidationError(
                f"{op}: a {type(item).__name__} has no order to store; send a list"
            )
        if isinstance(item, _LEAVES) or id(item) in seen:  # a str or int enum is text or a number
            continue
        if isinstance(item, Mapping):
            seen.add(id(item))
            for key in item:
                if not isinstance(key, str):
                    raise ValidationError(
                        f"{op}: keys must be strings, not {type(key).__name__} ({shown(key)})"
                    )
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            seen.add(id(item))
            stack.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            seen.add(id(item))
            stack.extend(getattr(item, field.name) for field in dataclasses.fields(item))
        elif not isinstance(item, BaseModel):
            raise ValidationError(
                f"{op}: a {type(item).__name__} ({shown(item)}) is no JSON value; send "
                "text, a number, a boolean or an aware datetime"
            )


def _metadata_checked(sent: Mapping[str, Any]) -> None:
    """Runs the library's ``check_metadata`` on the metadata a call sends (its own, or each
    turn's: ``add_turns``' ``turns``, ``ingest_round``'s ``turn``), so a value JSON has no
    type for (a datetime, a Decimal, a path, any object) is refused as ``AgentMemory``
    refuses it, where ``codec.jsonable`` sent its text and the server stored that."""
    turns = sent.get("turns")
    given = [sent, sent.get("turn"), *(turns if isinstance(turns, list | tuple) else ())]
    for holder in given:
        if isinstance(holder, Mapping) and holder.get("metadata") is not None:
            check_metadata(holder["metadata"])


def _too_deep(op: str) -> ValidationError:
    """The refusal of a value nested too deeply to convert or write as JSON."""
    return ValidationError(
        f"{op}: an argument nests too deeply to send as JSON; send flatter values"
    )


def _path_value(op: str, name: str, value: Any) -> str:
    """An id as a URL path segment: a non-empty string, as the library's ``check_id``
    wants, whose text can be encoded (a lone surrogate cannot)."""
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{op}: {name} must be a non-empty string")
    try:
        return quote(value, safe="")
    except UnicodeEncodeError:
        raise ValidationError(
            f"{op}: {name} holds a lone UTF-16 surrogate (e.g. \\ud800); send valid text"
        ) from None


def _query_value(op: str, value: Any) -> Any:
    data = _sendable(op, value)
    if isinstance(data, list):
        return [str(v) for v in data]
    if isinstance(data, bool):
        return "true" if data else "false"
    return str(data)


def build_request(
    method: Any, op: str, given: dict[str, Any], default: AgentContext | None
) -> tuple[str, str, dict[str, Any]]:
    """The HTTP verb, path and httpx arguments of one call (only non-default arguments travel).

    ``method`` is the client method whose signature says which arguments exist.
    """
    route = spec.ROUTES_BY_OP[op]
    sent: dict[str, Any] = {}
    for param in codec.arguments(method):
        value = given[param.name]
        if value is not param.default:
            sent[param.name] = value
    path = route.full_path
    for name in route.path_params:
        path = path.replace("{" + name + "}", _path_value(op, name, sent.pop(name)))
    request: dict[str, Any] = {"headers": context_headers(given.get("context") or default)}
    if route.query:
        request["params"] = {k: _query_value(op, v) for k, v in sent.items()}
    else:
        request["content"] = json_body(op, sent)
        request["headers"]["content-type"] = "application/json"
    return route.method, path, request


def json_body(op: str, sent: dict[str, Any]) -> bytes:
    """The JSON body of a call. Raises ``ValidationError`` for NaN or Infinity (no JSON
    number holds them), as the library refuses them, rather than httpx's bare ValueError,
    and for an integer too long to write as text or a value nested too deeply; text is
    sent as ASCII escapes, so a lone surrogate reaches the server, which names it."""
    data = _sendable(op, sent)
    try:
        return json.dumps(data, allow_nan=False).encode("ascii")
    except RecursionError:
        raise _too_deep(op) from None
    except ValueError as exc:
        if "digits" in str(exc):  # int -> text past sys.get_int_max_str_digits()
            raise ValidationError(
                f"{op}: an integer is too long to write as JSON text; send a smaller number"
            ) from None
        raise ValidationError(
            f"{op}: NaN and Infinity are not JSON numbers and cannot be sent; send finite numbers",
        ) from None


def transport_error(base_url: str, exc: httpx.HTTPError) -> StoreError:
    """The ``StoreError`` a client raises when the service cannot be reached or is too slow."""
    if isinstance(exc, httpx.TimeoutException):
        return StoreError(
            f"no answer from {base_url} in time ({exc}); a write may still complete, "
            "so read before retrying",
        )
    return StoreError(
        f"cannot reach the attestor service at {base_url}: {exc}; "
        "check that `attestor-arango api` runs and the URL is right",
    )


def read_response(op: str, method: Any, response: httpx.Response) -> Any:
    """The typed result, or the typed error the server reported. A body that is not
    JSON, or nests too deeply for the reader (a bare RecursionError out of every method
    before), is kept as text: no model reads it, so a typed error is raised."""
    try:
        payload = response.json()
    except (ValueError, RecursionError):
        payload = response.text
    if response.status_code >= 400:
        raise error_from_payload(response.status_code, payload)
    try:
        return codec.load_result(method, payload)
    except Exception as exc:
        raise AttestorError(
            f"{op}: the server's answer does not match this client's model ({exc}); "
            "client and server versions probably differ",
        ) from exc


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The headers every request of a client carries."""
    headers = {"accept": "application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


def open_http(
    kind: type[HTTP],
    base_url: str,
    api_key: str | None,
    timeout: float,
    transport: Any,
) -> tuple[str, HTTP]:
    """The base URL (no trailing slash) and the httpx client of ``kind`` both clients open:
    every request carries the auth headers and the timeout.

    ``transport`` is typed by each client's own signature (a sync transport for
    ``httpx.Client``, an async one for ``httpx.AsyncClient``)."""
    url = base_url.rstrip("/")
    http = kind(base_url=url, headers=auth_headers(api_key), timeout=timeout, transport=transport)
    return url, http
