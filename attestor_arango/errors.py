"""Typed errors: what went wrong, as a class; what to do next, in the message.

Every error a caller can trigger with bad input, a forbidden call or a failing
backend has its own class with a stable ``code`` and HTTP status, so the REST
service, the MCP server, the CLI and the HTTP client all report it the same way
(the client raises the very class the server raised)::

    AttestorError                      attestor_error        500
    ├── ValidationError (ValueError)   invalid_input         422  bad arguments; nothing stored
    │   ├── TenantRequiredError        tenant_required       400  a store call without a tenant
    │   ├── SigningDisabled            signing_disabled      422  a signature check, signing off
    │   └── KeyFileError               signing_key_invalid   422  a signing key file is unusable
    ├── AccessDenied (PermissionError) permission_denied     403  role or read_only forbids it
    ├── NotFoundError (LookupError)    not_found             404  no such id in the caller's scope
    ├── ConflictError                  conflict              409  the stored state forbids it
    ├── EmbeddingMismatchError         embedding_mismatch    409  vectors of another model
    ├── QuotaExceededError             quota_exceeded        429  a write quota is spent
    ├── EmbedderUnavailable            embedder_unavailable  503  no embedder can be loaded
    ├── LLMError                       llm_error             502  an optional LLM step failed
    ├── MissingExtraError              missing_extra         501  an optional extra is missing
    ├── CallCancelled                  cancelled             504  timed out; nothing stored
    └── StoreError                     store_error           503  the backend failed
        └── TenantLeakError            tenant_leak           500  a foreign row: a bug, not a leak

Catch ``AttestorError`` for everything the package raises on purpose; anything else
is a bug. The REST layer adds its own subclasses for transport cases
(``interfaces/api/errors.py``).
"""

from __future__ import annotations

import re
from typing import Any

# the user part of a URL (``scheme://user:password@host``, or a token as the user name):
# an endpoint configured with its credentials must not hand them to whoever reads an error
_AUTHORITY = re.compile(r"[^/?#\s]*")  # one greedy class, nothing after it: no backtracking


def without_credentials(text: str) -> str:
    """``text`` with the user part of every URL in it (after ``://``, up to the last ``@``
    before the path, as clients read it) replaced by ``***``. One pass over the text: an
    error may quote what a caller sent, so no input may make this cost more."""
    if "@" not in text or "://" not in text:
        return text
    out: list[str] = []
    done = 0
    at = text.find("://")
    while at != -1:
        start = at + 3
        end = _AUTHORITY.match(text, start).end()  # type: ignore[union-attr]  # always matches
        user_end = text.rfind("@", start, end)
        if user_end != -1:
            out.append(text[done:start])
            out.append("***")
            done = user_end
        at = text.find("://", max(end - 2, at + 1))  # "b://c@d" may follow at once
    out.append(text[done:])
    return "".join(out)


def shown(value: object, width: int = 64) -> str:
    """``repr`` of a value a message quotes, cut to ``width`` characters. A caller's value
    may be an integer too long to write as text (``sys.get_int_max_str_digits``) or nested
    too deeply to print: it is named by its type, so the message that names it raises the
    error it was written for, not a ``ValueError`` or ``RecursionError`` of its own."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):
        name = type(value).__name__
        return f"({'an' if name[:1] in 'aeiou' else 'a'} {name} too large to print)"
    return text if len(text) <= width else text[: width - 3] + "..."


def _shown(value: Any) -> Any:
    return without_credentials(value) if isinstance(value, str) else value


class AttestorError(Exception):
    """Base of every error this package raises on purpose."""

    code: str = "attestor_error"
    http_status: int = 500

    def __init__(self, message: str, **details: Any) -> None:
        # errors reach callers (REST, MCP, a recall's ``errors``), never a URL's password
        message = without_credentials(message) if isinstance(message, str) else message
        super().__init__(message)
        self.message = message
        self.details = {name: _shown(value) for name, value in details.items()}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class ValidationError(AttestorError, ValueError):
    """Input that can never be stored as given."""

    code = "invalid_input"
    http_status = 422


class TenantRequiredError(ValidationError):
    """A store call without a tenant: refused before any I/O (fail closed)."""

    code = "tenant_required"
    http_status = 400


class SigningDisabled(ValidationError, RuntimeError):
    """A signature check (``verify_memory``, ``verify_all``) on a service that signs nothing
    (``signing.enabled`` off). Also the ``RuntimeError`` Attestor's ``verify_memory`` raises
    then, so code written for Attestor catches it as it did."""

    code = "signing_disabled"


class AccessDenied(AttestorError, PermissionError):
    """The agent's role (or read_only switch) does not allow the operation."""

    code = "permission_denied"
    http_status = 403


class NotFoundError(AttestorError, LookupError):
    """No such record in the caller's tenant (records of other tenants look the same)."""

    code = "not_found"
    http_status = 404


class ConflictError(AttestorError):
    """The operation conflicts with the stored state (e.g. closing a closed memory)."""

    code = "conflict"
    http_status = 409


class EmbeddingMismatchError(AttestorError):
    """The tenant's vectors were made by another embedder or dimension."""

    code = "embedding_mismatch"
    http_status = 409


class QuotaExceededError(AttestorError):
    """A daily write quota or a per-agent write limit is used up."""

    code = "quota_exceeded"
    http_status = 429


class StoreError(AttestorError):
    """The backend failed; the message names the backend and what to check."""

    code = "store_error"
    http_status = 503


class EmbedderUnavailable(AttestorError):
    """The configured embedder cannot be reached, loaded or used; the message says how to fix it."""

    code = "embedder_unavailable"
    http_status = 503


class TenantLeakError(StoreError):
    """A backend returned a row of another tenant: a bug, raised instead of leaked."""

    code = "tenant_leak"
    http_status = 500


class CallCancelled(AttestorError):
    """The call's caller stopped waiting (the service's request timeout) before it was
    stored: its writes were rolled back, so nothing of it is stored and it may be retried."""

    code = "cancelled"
    http_status = 504


class MissingExtraError(AttestorError):
    """An optional part (the REST server, the MCP server) is not installed; the message
    is the one ``pip install`` command that adds it."""

    code = "missing_extra"
    http_status = 501
