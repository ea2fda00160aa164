"""Signatures to wire formats: what every interface shares.

The REST server, the OpenAPI document and ``MemoryClient`` all derive their
argument and result shapes from AgentMemory's own signatures, so a parameter
added there travels over HTTP without a second definition to keep in step.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from datetime import date, datetime
from enum import Enum
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, Strict, TypeAdapter, create_model
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.clock import time_from_text, to_us
from attestor_arango.errors import ValidationError
from attestor_arango.validation import int_from_text, number_from_text, problem_sentences

SKIP_PARAMS = frozenset({"self", "context"})
_JSON_SCALARS = (str, int, float, bool, type(None))


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """``fn``'s resolved annotations (every name they use is imported where ``fn`` is defined).

    Raises ``TypeError`` naming the method when an annotation cannot be resolved: an
    interface must never guess a wire format.
    """
    try:
        return typing.get_type_hints(fn)
    except Exception as exc:
        raise TypeError(f"cannot resolve the annotations of {fn.__qualname__}: {exc}") from exc


def _jsonable_default(value: Any) -> bool:
    if isinstance(value, _JSON_SCALARS):
        return True
    if isinstance(value, list | tuple):
        return all(isinstance(v, _JSON_SCALARS) for v in value)
    return False


def arguments(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters a remote caller may send (no self, no context, no *args)."""
    out = []
    for name, param in inspect.signature(fn).parameters.items():
        if name in SKIP_PARAMS:
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        out.append(param)
    return out


@lru_cache(maxsize=256)
def params_model(fn: Callable[..., Any], title: str, strict: bool = False) -> type[BaseModel]:
    """A pydantic model of ``fn``'s arguments; extra keys are rejected.

    Optional arguments whose default cannot be shown as JSON (sentinels such as
    ``...`` meaning "leave unchanged") get no default in the schema; callers use
    ``model_dump(exclude_unset=True)`` so AgentMemory's own defaults still apply.
    ``strict`` (a JSON body) takes every number, boolean, text and time as the JSON type
    it was sent as (``strict_hint``); a query string carries only text, so it is read laxly.
    """
    hints = type_hints(fn)
    fields: dict[str, Any] = {}
    for param in arguments(fn):
        ann = hints.get(param.name, Any)
        if strict:
            ann = strict_hint(ann)
        if param.default is inspect.Parameter.empty:
            fields[param.name] = (ann, ...)
        elif _jsonable_default(param.default):
            default = list(param.default) if isinstance(param.default, tuple) else param.default
            fields[param.name] = (ann, Field(default=default))
        else:
            fields[param.name] = (ann, Field(default=None, json_schema_extra=_drop_default))
    model: type[BaseModel] = create_model(
        title,
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **fields,
    )
    return model


_STRICT_LEAVES = (bool, int, float, str, datetime)


def strict_hint(hint: Any) -> Any:
    """``hint`` with each scalar (bool, int, float, str, datetime) made strict, in unions and
    containers too: a JSON body's ``"5"`` is not the integer 5, ``true`` not the number 1
    and ``"true"`` not a boolean. Containers stay lax (a JSON array fills a tuple), and a
    time stays what was sent (text or a number), for the library to read as it always does.
    """
    if hint in _STRICT_LEAVES:
        return Annotated[hint, Strict()]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if not args:
        return hint
    if origin is Annotated:
        return Annotated[(strict_hint(args[0]), *hint.__metadata__)]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(strict_hint(arg) for arg in args)]  # noqa: UP007
    if origin in (list, tuple, dict, collections.abc.Sequence, collections.abc.Mapping):
        return origin[tuple(arg if arg is Ellipsis else strict_hint(arg) for arg in args)]
    return hint


def _drop_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


@lru_cache(maxsize=256)
def return_adapter(fn: Callable[..., Any]) -> TypeAdapter[Any]:
    """Validates/serialises what ``fn`` returns, from its return annotation."""
    return TypeAdapter(type_hints(fn).get("return", Any))


def query_arguments(fn: Callable[..., Any], raw: Mapping[str, Any]) -> dict[str, Any]:
    """A query string's values, read as a JSON body's would be; a query string carries only
    text. A parameter that takes a time (``as_of``, ``time_window``) reads a plain number as
    epoch seconds, as the library and a body do (``clock.time_from_text``); one that takes
    a number and no text reads plain digits only (``validation.int_from_text``,
    ``number_from_text``), where pydantic's lax reading would take ``1_0``, ``+1``, `` 7``,
    ``10.0``, ``nan`` and ``inf``. Raises ``ValidationError`` naming the parameter."""
    hints = type_hints(fn)
    out = dict(raw)
    for name, value in raw.items():
        read = _text_reader(hints.get(name), name)
        if read is None:
            continue
        if isinstance(value, str):
            out[name] = read(value)
        elif isinstance(value, list):
            out[name] = [read(v) if isinstance(v, str) else v for v in value]
    return out


def _text_reader(hint: Any, name: str) -> Callable[[str], Any] | None:
    """How a query parameter's text becomes its value; None: as text, for pydantic."""
    if _takes_time(hint):
        return time_from_text
    leaves = _leaves(hint)
    if str in leaves:
        return None
    if float in leaves:
        return lambda text: number_from_text(text, name)
    if int in leaves:
        return lambda text: int_from_text(text, name)
    return None


def _leaves(hint: Any) -> set[Any]:
    """The scalar types a hint admits, through unions, containers and ``Annotated``."""
    args = typing.get_args(hint)
    if not args:
        return {hint}
    if typing.get_origin(hint) is Annotated:
        return _leaves(args[0])
    return set().union(*(_leaves(arg) for arg in args if arg is not Ellipsis))


def _takes_time(hint: Any) -> bool:
    """Whether a parameter's annotation admits a datetime (anywhere inside it)."""
    if hint is datetime:
        return True
    return any(_takes_time(arg) for arg in typing.get_args(hint))


def call_kwargs(
    fn: Callable[..., Any], title: str, raw: Mapping[str, Any], *, strict: bool = False
) -> dict[str, Any]:
    """Validate a request's arguments against ``fn``; only the ones sent are returned.

    ``strict`` for a JSON body (see ``params_model``). Raises ``ValidationError`` whose
    message names each refused field and what it needs; ``details.errors`` lists them, the
    first ``MAX_ERRORS`` only (``details.error_count`` says how many there were): a body of
    100,000 wrong tags would otherwise be answered with one error each, ~20 MB for 1 MB.
    """
    model = params_model(fn, title, strict)
    try:
        parsed = model.model_validate(dict(raw))
    except PydanticValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False, include_input=False)
        raise ValidationError(
            f"invalid arguments for {title}: {problem_sentences(errors, MAX_ERRORS)}",
            errors=jsonable(errors[:MAX_ERRORS]),
            error_count=len(errors),
        ) from None
    return {name: getattr(parsed, name) for name in parsed.model_fields_set}


MAX_ERRORS = 20  # problems a refused request is told of: the first ones say what to fix


VERDICTS = ("ok", "status")


def dump_result(fn: Callable[..., Any], value: Any) -> Any:
    """A method's result as JSON-ready data (by its annotation, else structurally)."""
    try:
        dumped = return_adapter(fn).dump_python(value, mode="json", warnings=False)
    except Exception:
        return jsonable(value)
    if isinstance(dumped, dict) and dataclasses.is_dataclass(value):
        dumped.update(verdicts(value))
    return dumped


def verdicts(value: Any) -> dict[str, Any]:
    """A report's verdict properties (``ok``, ``status``): a field-wise dump drops them, yet a
    REST caller without our client reads them from the JSON. The client ignores them. Only
    these names: other properties (a pack's ``prompt``) would repeat what the fields hold."""
    found: dict[str, Any] = {}
    for name in VERDICTS:
        if isinstance(getattr(type(value), name, None), property):
            found[name] = getattr(value, name)
    return found


def load_result(fn: Callable[..., Any], payload: Any) -> Any:
    """The client's inverse of ``dump_result``."""
    return return_adapter(fn).validate_python(payload)


def jsonable(value: Any) -> Any:
    """Structural JSON conversion for values without a usable annotation."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, Enum):
        return jsonable(value.value)
    if isinstance(value, datetime):
        return wire_time(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(jsonable(v) for v in value)
    if isinstance(value, _JSON_SCALARS):
        return value
    if isinstance(value, bytes | bytearray | memoryview):  # str() gives "b'...'", not text
        raise TypeError("bytes are not text: decode them (e.g. value.decode('utf-8')) first")
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return item()
    return str(value)


def wire_time(value: datetime) -> str:
    """An aware datetime as ISO-8601; a naive one is refused like the library does."""
    to_us(value)
    return value.isoformat()
