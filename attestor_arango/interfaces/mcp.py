"""MCP server (official ``mcp`` SDK, stdio): AgentMemory as tools, resources and prompts.

Every tool forwards its arguments to the AgentMemory method of the same name
as the server's one identity (from the environment, SOLO by default). A typed
error becomes an MCP error result whose text is the JSON ``{code, message,
details}``, so a model can read what to fix; the server never crashes on one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.prompts.base import Message, UserMessage

from attestor_arango.context import AgentContext
from attestor_arango.errors import AttestorError
from attestor_arango.interfaces.api.codec import jsonable

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


def _read(fn: Callable[[], Any]) -> str:
    try:
        return json.dumps(jsonable(fn()), indent=2)
    except AttestorError as err:
        raise ResourceError(json.dumps(err.to_dict())) from err


def build_server(memory: Any, context: AgentContext | None = None) -> MCPServer[Any]:
    """The MCP server over ``memory``, acting as ``context`` (default: the memory's own)."""
    ctx = context or memory.default_context
    server: MCPServer[Any] = MCPServer(
        name="attestor-arango", instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool(
        description="Store one fact. Same entity+category with new content "
        "supersedes the old fact (it stays readable with as_of)."
    )
    def memory_add(
        content: str,
        entity: str | None = None,
        category: str | None = None,
        tags: list[str] | None = None,
        confidence: float = 1.0,
        valid_from: str | None = None,
        valid_until: str | None = None,
        metadata: dict[str, Any] | None = None,
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
                context=ctx,
            )
        )

    @server.tool(description="Read one memory by id, optionally as it was at as_of.")
    def memory_get(memory_id: str, as_of: str | None = None) -> dict[str, Any]:
        return _run(lambda: memory.get(memory_id, as_of=as_of, context=ctx))

    @server.tool(description="Ranked, token-budgeted recall for a question (deterministic).")
    def memory_recall(
        query: str, as_of: str | None = None, token_budget: int | None = None
    ) -> dict[str, Any]:
        return _run(
            lambda: memory.recall(query, as_of=as_of, token_budget=token_budget, context=ctx)
        )

    @server.tool(description="Search memories; returns them ranked, without budget packing.")
    def memory_search(
        query: str,
        limit: int = 10,
        entity: str | None = None,
        category: str | None = None,
        as_of: str | None = None,
    ) -> dict[str, Any]:
        return {
            "memories": _run(
                lambda: memory.search(
                    query, limit=limit, entity=entity, category=category, as_of=as_of, context=ctx
                )
            )
        }

    @server.tool(description="Close a memory (orchestrator role only); it stays in history.")
    def memory_forget(memory_id: str, reason: str | None = None) -> dict[str, Any]:
        return _run(lambda: memory.forget(memory_id, reason=reason, context=ctx))

    @server.tool(description="Every version of the facts about an entity, oldest first.")
    def memory_timeline(entity: str, as_of: str | None = None) -> dict[str, Any]:
        return {"memories": _run(lambda: memory.timeline(entity, as_of=as_of, context=ctx))}

    @server.tool(description="Counts of memories, episodes, entities and audit entries.")
    def memory_stats() -> dict[str, Any]:
        return _run(lambda: memory.stats(context=ctx))

    @server.tool(description="Health of the document, vector and graph roles and the embedder.")
    def memory_health() -> dict[str, Any]:
        return _run(memory.health)

    if callable(getattr(memory, "recall_as_pack", None)):

        @server.tool(
            description="Recall as a frozen, citable pack plus a Chain-of-Note prompt "
            "with ABSTAIN and CONFLICT rules."
        )
        def memory_recall_pack(
            query: str, as_of: str | None = None, token_budget: int | None = None
        ) -> dict[str, Any]:
            return _run(
                lambda: memory.recall_as_pack(
                    query, as_of=as_of, token_budget=token_budget, context=ctx
                )
            )

    @server.resource(
        "memory://memories",
        name="memories",
        description="Active memories of this server's namespace (newest 100)",
        mime_type="application/json",
    )
    def list_memories() -> str:
        return _read(lambda: memory.list(limit=100, context=ctx))

    @server.resource(
        "memory://memories/{memory_id}",
        name="memory",
        description="One memory by id",
        mime_type="application/json",
    )
    def read_memory(memory_id: str) -> str:
        return _read(lambda: memory.get(memory_id, context=ctx))

    @server.resource(
        "memory://entities/{entity}/timeline",
        name="timeline",
        description="Every version of the facts about an entity",
        mime_type="application/json",
    )
    def read_timeline(entity: str) -> str:
        return _read(lambda: memory.timeline(entity, context=ctx))

    @server.prompt(description="Answer a question from recalled memory, citing ids.")
    def recall(question: str) -> list[Message]:
        notes = _read(lambda: memory.recall(question, context=ctx))
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
        facts = _read(lambda: memory.current_facts(entity=entity, context=ctx))
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


def run_stdio(memory: Any, context: AgentContext | None = None) -> None:
    """Serve on stdin/stdout until the client closes the stream; then close the memory."""
    server = build_server(memory, context)
    try:
        server.run("stdio")
    finally:
        memory.close()
