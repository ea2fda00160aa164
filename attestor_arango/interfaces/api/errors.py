"""Errors only the network interfaces raise, and the code -> class map.

A REST error body is ``AttestorError.to_dict()``: ``{code, message, details}``.
``error_from_payload`` turns such a body back into the same typed exception on
the client side, so ``except NotFoundError`` works for local and remote callers.
"""

from __future__ import annotations

from typing import Any

from attestor_arango.errors import (
    AccessDenied,
    AttestorError,
    NotFoundError,
    StoreError,
    ValidationError,
)


class AuthenticationError(AccessDenied):
    """No API key, or one the server does not know."""

    code = "unauthenticated"
    http_status = 401


class PayloadTooLarge(ValidationError):
    """The request body is over the server's size limit."""

    code = "payload_too_large"
    http_status = 413


class UnsupportedMediaType(ValidationError):
    """A request body declared as something other than JSON (form data, text)."""

    code = "unsupported_media_type"
    http_status = 415


class RouteNotFound(NotFoundError):
    """No route at this path (a wrong URL, not a missing record)."""

    code = "route_not_found"
    http_status = 404


class MethodNotAllowed(ValidationError):
    """The path exists but not for this HTTP method."""

    code = "method_not_allowed"
    http_status = 405


class RequestTimeout(StoreError):
    """The operation did not finish within the server's request timeout.

    A timed-out write may still complete on the server: read before retrying.
    """

    code = "timeout"
    http_status = 504


class InternalError(AttestorError):
    """An unexpected server failure; the server log has the traceback."""

    code = "internal_error"
    http_status = 500


def _all_subclasses(cls: type[AttestorError]) -> list[type[AttestorError]]:
    out: list[type[AttestorError]] = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_all_subclasses(sub))
    return out


def error_classes() -> dict[str, type[AttestorError]]:
    """Every known error code -> its class (recomputed, so later subclasses count)."""
    table: dict[str, type[AttestorError]] = {AttestorError.code: AttestorError}
    for cls in _all_subclasses(AttestorError):
        table.setdefault(cls.code, cls)
    return table


_BY_STATUS: dict[int, type[AttestorError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: AccessDenied,
    404: NotFoundError,
    405: MethodNotAllowed,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: ValidationError,
    504: RequestTimeout,
}


def error_from_payload(status: int, payload: Any) -> AttestorError:
    """Rebuild the typed exception a server reported (falls back on the status)."""
    if isinstance(payload, dict) and isinstance(payload.get("code"), str):
        cls = error_classes().get(payload["code"])
        message = str(payload.get("message") or payload["code"])
        found = payload.get("details")
        details: dict[str, Any] = found if isinstance(found, dict) else {}
    else:
        cls = None
        message = f"HTTP {status}: {str(payload)[:200]}"
        details = {}
    if cls is None:
        cls = _BY_STATUS.get(status, StoreError if status >= 500 else AttestorError)
    err = cls(message)  # details set apart: a key named "message" must not collide
    err.details = dict(details)
    return err
