"""Who is looking: the REST service's API keys and narrowed contexts, for a browser.

A browser cannot add an ``Authorization: Bearer`` header to a link it follows, so the
Evidence Board also takes the key as the password of HTTP Basic authentication (the
browser asks once and repeats it on every page). The key is checked by the same
``KeyRing``, the context is narrowed by the same headers (plus the ``ns`` query
parameter, which is just another way to send ``X-Namespace``), and every read goes
through the same ``authorize`` as its REST route, so a key sees in the UI exactly what
it may read over REST. The context is always read-only: nothing here can write.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attestor_arango.context import AgentContext
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.api.auth import ANY, ApiKey, KeyRing, authorize, refuse_repeated
from attestor_arango.interfaces.api.errors import AuthenticationError

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

REALM = 'Basic realm="attestor-arango Evidence Board", charset="UTF-8"'
# who reads when a key grants any agent ("*") and the browser names none (it cannot send
# X-Agent-Id, and "*" is no agent's name)
BOARD_AGENT = "evidence-board"


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key from ``X-API-Key``, ``Authorization: Bearer`` or Basic (the password)."""
    auth = headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    if scheme.lower() == "basic" and value.strip():
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise AuthenticationError(
                "the Basic credentials are not valid base64 UTF-8; "
                "give any user name and the API key as the password"
            ) from None
        _, _, password = decoded.partition(":")
        return password or None
    return headers.get(spec.H_API_KEY) or None


@dataclass(frozen=True)
class Reader:
    """One request's caller: calls AgentMemory's public read methods as its context."""

    memory: AgentMemory
    key: ApiKey
    context: AgentContext

    @property
    def tenant_wide(self) -> bool:
        """Whether the key may run tenant-wide reads (audit chain, signatures)."""
        return self.key.namespaces is None

    @property
    def namespaces(self) -> tuple[str, ...] | None:
        return self.key.namespaces

    def call(self, op: str, /, **kwargs: Any) -> Any:
        """``memory.<op>(**kwargs, context=ctx)`` after the REST route's own checks."""
        authorize(spec.ROUTES_BY_OP[op], self.key, self.context, kwargs)
        return getattr(self.memory, op)(**kwargs, context=self.context)


class Gate:
    """Turns a request's headers and ``ns`` parameter into a ``Reader`` (or refuses)."""

    def __init__(self, memory: AgentMemory, ring: KeyRing, fixed_key: ApiKey | None) -> None:
        self.memory = memory
        self.ring = ring
        self.fixed_key = fixed_key

    def reader(self, headers: Mapping[str, str], namespace: str | None) -> Reader:
        """Raises AuthenticationError (401), AccessDenied (403) or ValidationError (400)."""
        if self.fixed_key is not None:
            key = self.fixed_key
        else:
            key = self.ring.authenticate(presented_key(headers))
        refuse_repeated(headers)  # the dict below would keep one of them unsaid
        narrowed = {name.lower(): value for name, value in headers.items()}
        if namespace:
            narrowed[spec.H_NAMESPACE] = namespace
        if key.agent_ids[0] == ANY and spec.H_AGENT not in narrowed:
            narrowed[spec.H_AGENT] = BOARD_AGENT
        narrowed[spec.H_READ_ONLY] = "1"  # the board never writes, whatever the key grants
        return Reader(self.memory, key, self.ring.context(key, narrowed))
