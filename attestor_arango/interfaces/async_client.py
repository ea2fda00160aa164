"""AsyncMemoryClient: MemoryClient's methods as coroutines, with the same signatures.

Every method is made from the sync client's signature on first access, so the two
clients cannot drift apart (``tests/test_client_async.py``).
"""

from __future__ import annotations

import inspect
from typing import Any

import httpx

from attestor_arango.context import AgentContext
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.client import MemoryClient
from attestor_arango.interfaces.wire import (
    build_request,
    open_http,
    read_response,
    transport_error,
)


class AsyncMemoryClient:
    """MemoryClient for asyncio: every method is a coroutine with the same signature."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        context: AgentContext | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url, self._http = open_http(
            httpx.AsyncClient, base_url, api_key, timeout, transport
        )
        self.default_context = context

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, op: str, given: dict[str, Any]) -> Any:
        method = getattr(MemoryClient, op)
        verb, path, request = build_request(method, op, given, self.default_context)
        try:
            response = await self._http.request(verb, path, **request)
        except httpx.HTTPError as exc:
            raise transport_error(self.base_url, exc) from exc
        return read_response(op, method, response)

    def __getattr__(self, name: str) -> Any:
        """``await client.add(...)`` etc.: the sync client's signature, awaited."""
        if name.startswith("_") or name not in spec.ROUTES_BY_OP:
            raise AttributeError(name)
        signature = inspect.signature(getattr(MemoryClient, name))

        async def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(None, *args, **kwargs)
            bound.apply_defaults()
            given = dict(bound.arguments)
            given.pop("self")
            return await self._call(name, given)

        call.__name__ = name
        call.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=list(signature.parameters.values())[1:]
        )
        return call
