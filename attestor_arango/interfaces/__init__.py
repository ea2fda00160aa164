"""The ways in: REST API, MCP server, HTTP client and CLI; each maps onto AgentMemory only."""
