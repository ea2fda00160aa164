"""MCP server (official ``mcp`` SDK, stdio or streamable HTTP): AgentMemory as tools,
resources and prompts.

Every tool forwards its arguments to the AgentMemory method of the same name, as
the server's one identity over stdio (from the environment, SOLO by default) or,
over HTTP, as the context the request's API key grants (``mcp_http``). A typed
error becomes an MCP error result whose text is the JSON ``{code, message,
details}``, so a model can read what to fix; the server never crashes on one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import ValidationError as PydanticValidationError

from attestor_arango.context import AgentContext
from attestor_arango.errors import AttestorError
from attestor_arango.interfaces import mcp_fields as f
from attestor_arango.interfaces.api import spec
from attestor_arango.interfaces.api.auth import KeyRing
from attestor_arango.interfaces.api.codec import jsonable
from attestor_arango.interfaces.api.logs import log_failure
from attestor_arango.interfaces.mcp_requests import RequestErrors
from attestor_arango.scope import chosen_namespace
from attestor_arango.version import __version__

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

INSTRUCTIONS = (
    "Shared, bi-temporal memory for a team of agents. Call memory_recall before answering "
    "from memory; record durable facts with memory_add (one fact per call, with an entity "
    "and category so a newer fact supersedes an older one). Past beliefs stay readable "
    "with as_of (ISO-8601 with Z). Errors come back as JSON with a code and what to fix."
)


def _run(fn: Callable[[], Any]) -> Any:
    """Call AgentMemory; a typed error becomes a ToolError carrying its JSON."""
    try:
        return jsonable(fn())
    except AttestorError as err:
        raise ToolError(json.dumps(err.to_dict())) from err


def _window(window: list[str] | None) -> tuple[str, str] | None:
    return None if window is None else (window[0], window[1])


def _read(fn: Callable[[], Any]) -> str:
    """A resource's (or a prompt's) JSON; a typed error is raised carrying its JSON.

    As ``MCPError``: the one exception the SDK passes on from a prompt (any other it
    replaces by "Error rendering prompt", which says neither what nor why), and from a
    resource with its code (a ``ResourceError`` is -32603, a server failure, even for an
    unknown id): invalid params for what the caller got wrong, internal error for the rest.
    """
    try:
        return json.dumps(jsonable(fn()), indent=2)
    except AttestorError as err:
        code = INVALID_PARAMS if err.http_status < 500 else INTERNAL_ERROR
        raise MCPError(code, json.dumps(err.to_dict())) from err


class _Server(MCPServer[Any]):
    """MCPServer that knows who each request is from and explains bad arguments in words.

    Over HTTP the request's headers (API key and narrowing headers, as for REST)
    are kept in a context variable while the tool, resource or prompt runs, so
    every handler resolves its caller from them; over stdio there are none and
    the server's one identity applies.
    """

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        schema = self._tool_input_schema(name)  # None: an unknown tool, which the SDK reports
        loose = "" if schema is None else f.loose_arguments(name, arguments, schema)
        if loose:
            raise ToolError(json.dumps(_invalid(loose, name)))
        token = _HEADERS.set(_headers_of(context))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, PydanticValidationError):
                err = argument_error(name, cause, self._tool_input_schema(name) or {})
                raise ToolError(json.dumps(err.to_dict())) from None
            if isinstance(exc, UnexpectedToolError):  # the SDK logs its cause's message
                raise ToolError(json.dumps(log_failure(f"tool {name}", exc).to_dict())) from None
            raise
        finally:
            _HEADERS.reset(token)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio transport behind a screen that answers every line (mcp_stdio)."""
        from attestor_arango.interfaces import mcp_stdio

        await mcp_stdio.serve(self)

    async def read_resource(self, uri: Any, context: Context[Any, Any] | None = None) -> Any:
        token = _HEADERS.set(_headers_of(context))
        try:
            return await super().read_resource(uri, context)
        finally:
            _HEADERS.reset(token)

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> Any:
        prompt = self._prompt_manager.get_prompt(name)  # None: unknown, which the SDK reports
        takes = {arg.name for arg in (prompt.arguments or [])} if prompt else set()
        extra = sorted(set(arguments or {}) - takes) if prompt else []
        if extra:  # the SDK would say only "Error rendering prompt"
            message = f"prompt {name} has no argument {', '.join(map(repr, extra))}"
            raise MCPError(INVALID_PARAMS, json.dumps(_invalid(message, name)))
        token = _HEADERS.set(_headers_of(context))
        try:
            return await super().get_prompt(name, arguments, context)
        finally:
            _HEADERS.reset(token)


def _headers_of(context: Context[Any, Any] | None) -> Mapping[str, str] | None:
    if context is None:
        return None
    try:
        return context.headers
    except ValueError:  # no request behind this context (an in-process call)
        return None


_HEADERS: ContextVar[Mapping[str, str] | None] = ContextVar("mcp_headers", default=None)


def _invalid(message: str, tool: str) -> dict[str, Any]:
    from attestor_arango.errors import ValidationError

    return ValidationError(message, tool=tool).to_dict()


def argument_error(tool: str, exc: PydanticValidationError, schema: Mapping[str, Any]) -> Any:
    """A ValidationError whose message says, in a sentence per field, what the call lacks."""
    from attestor_arango.errors import ValidationError

    props = schema.get("properties", {})
    sentences, fields = [], []
    for item in exc.errors():
        field = ".".join(str(p) for p in item["loc"]) or "arguments"
        fields.append(field)
        top = str(item["loc"][0]) if item["loc"] else ""
        hint = props.get(top, {}).get("description", "")
        if item["type"] == "missing":
            sentences.append(
                f"{tool} needs the argument '{field}'" + (f": {hint}" if hint else ".")
            )
        else:
            sentences.append(
                f"'{field}' is not valid ({item['msg']})" + (f"; {hint}" if hint else ".")
            )
    return ValidationError(" ".join(sentences), tool=tool, fields=sorted(set(fields)))


class Caller:
    """Who a call acts as: the server's one context, or the key its HTTP request carries.

    With a KeyRing, the key and the narrowing headers are read exactly as the REST
    service reads them (``KeyRing.context``): a request narrows its key, never widens
    it. A call with no headers (stdio) is refused when keys are required.
    """

    def __init__(self, default: AgentContext, keys: KeyRing | None) -> None:
        self.default = default
        self.keys = keys

    def context(self, namespace: str | None = None) -> AgentContext:
        """The caller's context, optionally moved to another namespace its key allows.

        Raises AuthenticationError without a valid key, AccessDenied past the key's grant,
        ValidationError for an empty or malformed namespace (``chosen_namespace``).
        """
        if self.keys is None:
            ctx = self.default
            chosen = chosen_namespace(namespace, ctx.namespace)
            return ctx if chosen == ctx.namespace else replace(ctx, namespace=chosen)
        headers = {k.lower(): v for k, v in (_HEADERS.get() or {}).items()}
        presented = headers.get(spec.H_API_KEY)
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            presented = auth[7:].strip()
        key = self.keys.authenticate(presented)
        if namespace is not None:
            headers[spec.H_NAMESPACE] = namespace
        return self.keys.context(key, headers)


def build_server(
    memory: AgentMemory, context: AgentContext | None = None, keys: KeyRing | None = None
) -> MCPServer[Any]:
    """The MCP server over ``memory``.

    Without ``keys`` every call acts as ``context`` (default: the memory's own); with
    ``keys`` (HTTP) every call acts as the context its request's API key grants.
    """
    caller = Caller(context or memory.default_context, keys)
    server = _Server(
        name="attestor-arango",
        title="attestor-arango memory",
        version=__version__,
        instructions=INSTRUCTIONS,
        website_url=None,
        log_level="WARNING",
    )
    server._lowlevel_server.middleware.append(RequestErrors(server))  # mcp_requests

    @server.tool(
        annotations=f.ADD,
        description="Store one durable fact. A new fact with the same entity and category "
        "supersedes the old one, which stays readable with as_of. Returns the stored memory "
        "(its 'id', and 'supersedes' when it replaced one).",
    )
    def memory_add(
        content: f.Content,
        entity: f.Entity = None,
        category: f.Category = None,
        tags: f.Tags = None,
        confidence: f.Confidence = 1.0,
        valid_from: f.ValidFrom = None,
        valid_until: f.ValidUntil = None,
        metadata: f.Metadata = None,
    ) -> dict[str, Any]:
        return _run(
            lambda: memory.add(
                content,
                entity=entity,
                category=category,
                tags=tuple(tags or ()),
                confidence=confidence,
                valid_from=valid_from,
                valid_until=valid_until,
                metadata=metadata,
                context=caller.context(),
            )
        )

    @server.tool(
        annotations=f.READ,
        description="Read one memory by id, optionally as it was believed at as_of.",
    )
    def memory_get(memory_id: f.MemoryId, as_of: f.AsOf = None) -> dict[str, Any]:
        return _run(lambda: memory.get(memory_id, as_of=as_of, context=caller.context()))

    @server.tool(
        annotations=f.READ,
        description="Ranked, token-budgeted recall for a question: the memories most useful "
        "to answer it, best first, within the token budget. Deterministic; no writes. Call "
        "this before answering from memory.",
    )
    def memory_recall(
        query: f.Query,
        as_of: f.AsOf = None,
        time_window: f.TimeWindow = None,
        token_budget: f.TokenBudget = None,
    ) -> dict[str, Any]:
        return _run(
            lambda: memory.recall(
                query,
                as_of=as_of,
                time_window=_window(time_window),
                token_budget=token_budget,
                context=caller.context(),
            )
        )

    @server.tool(
        annotations=f.READ,
        description="Keyword search returning whole memories, ranked, without budget packing; "
        "filter by entity, category, tags, status, namespace and time.",
    )
    def memory_search(
        query: f.Query,
        limit: f.Limit = 10,
        entity: f.Entity = None,
        category: f.Category = None,
        tags: f.Tags = None,
        status: f.Status = None,
        namespace: f.Namespace = None,
        time_window: f.TimeWindow = None,
        as_of: f.AsOf = None,
    ) -> dict[str, Any]:
        return {
            "memories": _run(
                lambda: memory.search(
                    query,
                    limit=limit,
                    entity=entity,
                    category=category,
                    tags=tags,
                    status=status,
                    time_window=_window(time_window),
                    as_of=as_of,
                    context=caller.context(namespace),
                )
            )
        }

    @server.tool(
        annotations=f.FORGET,
        description="Close a memory (orchestrator role only): it stops being recalled but "
        "stays in history and the audit log. Forgetting it again is refused as a conflict.",
    )
    def memory_forget(memory_id: f.MemoryId, reason: f.Reason = None) -> dict[str, Any]:
        return _run(lambda: memory.forget(memory_id, reason=reason, context=caller.context()))

    @server.tool(
        annotations=f.READ,
        description="Every version of the facts about an entity, oldest first, superseded "
        "and archived ones included.",
    )
    def memory_timeline(entity: f.TimelineEntity, as_of: f.AsOf = None) -> dict[str, Any]:
        return {
            "memories": _run(lambda: memory.timeline(entity, as_of=as_of, context=caller.context()))
        }

    @server.tool(
        annotations=f.READ,
        description="Counts of memories (total, active, superseded, archived), episodes, "
        "entities and audit entries in your tenant.",
    )
    def memory_stats() -> dict[str, Any]:
        return _run(lambda: memory.stats(context=caller.context()))

    @server.tool(
        annotations=f.READ,
        description="Health of the document, vector and graph stores and the embedder.",
    )
    def memory_health() -> dict[str, Any]:
        def checked() -> dict[str, Any]:
            caller.context()  # a key is needed for this too over HTTP; refused as JSON
            return memory.health()

        return _run(checked)

    @server.tool(
        annotations=f.READ,
        description="Recall as a frozen, citable pack plus its Chain-of-Note prompt "
        "('prompt'): answer only from the numbered notes, cite them, ABSTAIN when they "
        "do not hold the answer, flag CONFLICT when they disagree.",
    )
    def memory_recall_pack(
        query: f.Query,
        as_of: f.AsOf = None,
        time_window: f.TimeWindow = None,
        token_budget: f.TokenBudget = None,
    ) -> dict[str, Any]:
        def pack() -> dict[str, Any]:
            made = memory.recall_as_pack(
                query,
                as_of=as_of,
                time_window=_window(time_window),
                token_budget=token_budget,
                context=caller.context(),
            )
            return {"pack": jsonable(made), "prompt": made.render_prompt()}

        return _run(pack)

    @server.resource(
        "memory://memories",
        name="memories",
        description="Active memories of this server's namespace (newest 100)",
        mime_type="application/json",
    )
    def list_memories() -> str:
        return _read(lambda: memory.list(limit=100, context=caller.context()))

    @server.resource(
        "memory://memories/{memory_id}",
        name="memory",
        description="One memory by id",
        mime_type="application/json",
    )
    def read_memory(memory_id: str) -> str:
        return _read(lambda: memory.get(memory_id, context=caller.context()))

    @server.resource(
        "memory://entities/{entity}/timeline",
        name="timeline",
        description="Every version of the facts about an entity",
        mime_type="application/json",
    )
    def read_timeline(entity: str) -> str:
        return _read(lambda: memory.timeline(entity, context=caller.context()))

    @server.prompt(description="Answer a question from recalled memory, citing ids.")
    def recall(question: str) -> list[Message]:
        notes = _read(lambda: memory.recall(question, context=caller.context()))
        return [
            UserMessage(
                "Answer from these recalled notes only. Cite memory ids in brackets. If the "
                "notes do not contain the answer, say you do not know (ABSTAIN). If two notes "
                "disagree, say so and name both ids (CONFLICT).\n\n"
                f"Question: {question}\n\nNotes (JSON):\n{notes}"
            )
        ]

    @server.prompt(description="Hand the current facts about a task to another agent.")
    def handoff(to_agent: str, task: str, entity: str | None = None) -> list[Message]:
        facts = _read(lambda: memory.current_facts(entity=entity, context=caller.context()))
        return [
            UserMessage(
                f"You are handing task '{task}' to agent '{to_agent}'. Write a short handoff "
                "note: the goal, the facts below that matter (cite ids), open questions, and "
                "what must not be redone. Record anything new with memory_add before you "
                f"finish.\n\nCurrent facts (JSON):\n{facts}"
            )
        ]

    @server.prompt(description="Record a decision as a memory that supersedes older ones.")
    def record_decision(decision: str, rationale: str, entity: str) -> list[Message]:
        return [
            UserMessage(
                "Record this decision with memory_add, category 'decision', entity "
                f"'{entity}', so it supersedes the previous decision about it. Put the "
                "rationale in metadata.rationale. Then confirm the new memory id.\n\n"
                f"Decision: {decision}\nRationale: {rationale}"
            )
        ]

    return server


def run_stdio(memory: AgentMemory, context: AgentContext | None = None) -> None:
    """Serve on stdin/stdout until the client closes the stream; then close the memory."""
    server = build_server(memory, context)
    try:
        server.run("stdio")
    finally:
        memory.close()
