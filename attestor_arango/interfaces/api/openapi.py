"""The OpenAPI 3.1 document, generated from the route table and AgentMemory's signatures.

Served at ``/openapi.json``; schemathesis fuzzes the service from it, so the
schemas here are exactly what the handlers validate against.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from attestor_arango.context import AgentRole
from attestor_arango.interfaces.api import codec, spec

if TYPE_CHECKING:
    from attestor_arango.memory import AgentMemory

REF = "#/components/schemas/{model}"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["code", "message", "details"],
    "properties": {
        "code": {"type": "string", "examples": ["not_found", "permission_denied"]},
        "message": {"type": "string"},
        "details": {"type": "object"},
    },
}

ERROR_STATUSES = {
    "401": "No or unknown API key",
    "403": "The key or role does not allow this",
    "404": "No such record in the caller's tenant",
    "409": "Conflicts with the stored state",
    "413": "Body over the size limit",
    "422": "Invalid arguments",
    "429": "Quota exceeded",
    "504": (
        "Timed out: code cancelled means nothing was stored; code timeout (a call that "
        "could not stop) means a write may still complete"
    ),
}


NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$"
IDENTITY_HEADERS: list[dict[str, Any]] = [
    {
        "name": "X-Agent-Id",
        "description": "one of the key's agent ids",
        "schema": {"type": "string", "minLength": 1, "maxLength": 128},
    },
    {
        "name": "X-Agent-Role",
        "description": "one of the key's roles",
        "schema": {"enum": [r.value for r in AgentRole]},
    },
    {
        "name": "X-Tenant",
        "description": "must equal the key's tenant",
        "schema": {"type": "string", "pattern": NAME_PATTERN},
    },
    {
        "name": "X-Namespace",
        "description": "a namespace the key allows",
        "schema": {"type": "string", "pattern": NAME_PATTERN},
    },
    {"name": "X-Session-Id", "schema": {"type": "string", "maxLength": 128}},
    {
        "name": "X-Read-Only",
        "description": "true narrows the caller to reads (1/0, yes/no, on/off read alike; "
        "another word is refused)",
        "schema": {"enum": ["true", "false"]},
    },
    {
        "name": "X-Token-Budget",
        "description": "lowers the key's token budget",
        "schema": {"type": "string", "pattern": "^[0-9]{1,9}$"},
    },
]


def _plain_tuples(node: Any) -> Any:
    """Fixed-length tuples as ``items: anyOf`` arrays instead of ``prefixItems``.

    ``prefixItems`` is valid OpenAPI 3.1, but several tools (schemathesis among them)
    still read array items the 3.0 way; the length bounds keep the shape strict enough.
    """
    if isinstance(node, list):
        return [_plain_tuples(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _plain_tuples(v) for k, v in node.items()}
    prefix = out.pop("prefixItems", None)
    if prefix is not None:
        unique = [p for i, p in enumerate(prefix) if p not in prefix[:i]]
        out["items"] = unique[0] if len(unique) == 1 else {"anyOf": unique}
    return out


def _lift(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """Move ``$defs`` into the document's components."""
    schema = _plain_tuples(schema)
    for name, sub in schema.pop("$defs", {}).items():
        components.setdefault(name, sub)
    return schema


def build_openapi(memory: AgentMemory, routes: list[spec.Route]) -> dict[str, Any]:
    cls = type(memory)
    components: dict[str, Any] = {"Error": ERROR_SCHEMA}
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        fn = getattr(cls, route.op)
        title = "".join(part.title() for part in route.op.split("_")) + "Params"
        params = codec.params_model(fn, title)
        schema = _lift(params.model_json_schema(ref_template=REF), components)
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        parameters = [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {**props.get(name, {"type": "string"}), "minLength": 1},
            }
            for name in route.path_params
        ]
        body_props = {k: v for k, v in props.items() if k not in route.path_params}
        body_required = sorted(r for r in required if r not in route.path_params)
        operation: dict[str, Any] = {
            "operationId": route.op,
            "summary": route.summary,
            "tags": [route.tag],
            "description": (codec.inspect.getdoc(fn) or route.summary).split("\n\n")[0],
        }
        if route.query:
            parameters += [
                {"name": k, "in": "query", "required": k in body_required, "schema": v}
                for k, v in body_props.items()
            ]
        else:
            body = copy.deepcopy(schema)
            body["properties"] = body_props
            body["required"] = body_required
            if not body_required:
                body.pop("required")
            operation["requestBody"] = {
                "required": bool(body_required),
                "content": {"application/json": {"schema": body}},
            }
        parameters += [{**h, "in": "header", "required": False} for h in IDENTITY_HEADERS]
        operation["parameters"] = parameters
        result = codec.return_adapter(fn).json_schema(mode="serialization", ref_template=REF)
        responses: dict[str, Any] = {
            "200": {
                "description": "OK",
                "content": {"application/json": {"schema": _lift(result, components)}},
            },
        }
        for status, text in ERROR_STATUSES.items():
            responses[status] = {
                "description": text,
                "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}},
            }
        operation["responses"] = responses
        paths.setdefault(route.full_path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "attestor-arango",
            "version": "1",
            "description": "Shared, bi-temporal, auditable memory for teams of LLM agents. "
            "Every /v1 call acts as the context its API key grants, narrowed by the "
            "X-Agent-Id, X-Agent-Role, X-Namespace, X-Session-Id and X-Read-Only headers.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
        },
        "security": [{"bearer": []}, {"apiKey": []}],
    }
