"""Offline lints for the ArangoDB backend: they run in the normal test suite.

No ArangoDB server is available where this project is built, so what a server would reject
(or worse, accept and leak) is checked statically:

1. every ``aql/`` file parses and its ``// @params:`` header equals the bind parameters its
   code uses (comments and string literals ignored); brackets balance and only known AQL
   functions are called -- ``lint_aql_dir``, ``lint_aql_syntax``;
2. every call site in this package passes exactly those parameters, minus ``tenant``
   (injected from the Scope), with a literal query name and a literal dict --
   ``lint_call_sites``; every registered query is used somewhere;
3. every query that touches a tenant collection filters on ``@tenant``: each ``FOR`` over a
   tenant collection compares ``<var>.tenant == @tenant``, each traversal requires it on all
   path vertices and edges (each as an AND-conjunct of its clause, never under an OR, a NOT
   or a ternary -- ``tenant_conjunct``), each ``UPSERT`` searches and each ``INSERT`` writes
   ``tenant: @tenant`` -- ``lint_tenant_filter``;
4. no AQL is built by string formatting anywhere in ``attestor_arango`` (f-strings,
   ``%``, ``.format``, ``+`` on text that looks like AQL) -- ``lint_no_aql_formatting``;
5. every attribute a write computes with AQL arithmetic (which always yields a double,
   ``Expression::executeSimpleExpressionArithmetic``) is typed so the collection's
   JSON-Schema accepts a double (``"number"``, never only ``"integer"``: the validator types
   a VelocyPack double as number only) -- ``lint_computed_numbers``;
6. every query that returns memory documents with ``UNSET`` leaves out every vector
   attribute (``docs.VECTOR_ATTRIBUTES``: the vector and a re-embedding's staged one),
   so no row carries kilobytes of vectors it was not asked for -- ``lint_vector_attributes``;
7. no ``UPDATE doc WITH {}`` nor an UPSERT's ``UPDATE {}``: since ArangoDB 3.10 they
   write nothing, so they neither touch nor hold the document -- ``lint_empty_updates``.

Each function returns a list of problems (empty = clean) so tests can show that a broken
example is caught.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from attestor_arango.errors import StoreError
from attestor_arango.scope import TemporalView
from attestor_arango.store.arango.base import COLLECTIONS
from attestor_arango.store.arango.docs import VECTOR_ATTRIBUTES
from attestor_arango.store.arango.planning import view_binds
from attestor_arango.store.arango.registry import (
    Query,
    Registry,
    parse_query,
    strip_comments_and_strings,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = REPO_ROOT / "attestor_arango"
AQL_DIR = REPO_ROOT / "aql"  # the lints check the repository's files, the source of the wheel
BACKEND_DIR = PACKAGE_DIR / "store" / "arango"
TENANT_SOURCES = frozenset(COLLECTIONS) | {"memories_view"}

# Methods that send a registered query; the value is the index of the params argument.
QUERY_METHODS = {"_run": 2, "_retrying": 2, "run": 2, "run_admin": 1}

_FOR = re.compile(
    r"\bFOR\s+(?P<vars>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*){0,2})\s+IN\s+"
    r"(?P<src>.*?)(?=\b(?:FILTER|SEARCH|LET|SORT|LIMIT|RETURN|OPTIONS|PRUNE|COLLECT|FOR|"
    r"UPDATE|REMOVE|INSERT|REPLACE|UPSERT)\b|$)",
    re.DOTALL,
)
_TRAVERSAL = re.compile(r"\b(?:ANY|OUTBOUND|INBOUND)\b")
_UPSERT_OBJECT = re.compile(r"\bUPSERT\s*(\{.*?\})", re.DOTALL)
_UPSERT_FILTER = re.compile(r"\bUPSERT\s+FILTER\b(.*?)\bINSERT\b", re.DOTALL)
_INSERT = re.compile(r"\bINSERT\b(?P<expr>.*?)\b(?:UPDATE|REPLACE|INTO|IN)\b", re.DOTALL)
_TENANT_FIELD = re.compile(r"\btenant\s*:\s*@tenant\b")
_MODIFY = re.compile(r"\b(?:UPDATE|REPLACE|REMOVE)\b")
# A tenant predicate guards a loop only as an AND-conjunct of its FILTER / SEARCH / PRUNE:
# under an OR, a NOT or a ternary it can be false while the clause holds for another
# tenant's rows ("FILTER m.id == @id OR m.tenant == @tenant" reads every tenant's m.id).
_CLAUSE = re.compile(r"\b(?:FILTER|SEARCH|PRUNE)\b")
_CLAUSE_END = re.compile(
    r"\b(?:FOR|FILTER|SEARCH|PRUNE|LET|SORT|LIMIT|RETURN|COLLECT|OPTIONS|UPDATE|REMOVE|"
    r"INSERT|REPLACE|UPSERT|WITH|INTO)\b"
)
_AND = re.compile(r"\bAND\b|&&")
# binds looser than AND: "a AND b OR c" is "(a AND b) OR c", so no part of it is a conjunct
_LOOSER = re.compile(r"\bOR\b|\|\||\?")
_OPEN, _CLOSE = "([{", ")]}"


def _depths(code: str) -> list[int]:
    """The bracket depth at each character of ``code`` (an opening bracket is inside)."""
    out, depth = [], 0
    for ch in code:
        if ch in _OPEN:
            depth += 1
        out.append(depth)
        if ch in _CLOSE:
            depth -= 1
    return out


def _scope_end(depths: list[int], start: int) -> int:
    """Where the loop starting at ``start`` stops binding its variable: the closing
    bracket of the subquery it sits in (the end of the text for a top-level loop). A
    filter after that bracket belongs to another loop, even one that reuses the name."""
    level = depths[start]
    return next((i for i in range(start, len(depths)) if depths[i] < level), len(depths))


def _wrapped(text: str) -> bool:
    """``text`` is one parenthesised group, ``( ... )``, and not a call or two groups."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch in _OPEN) - (ch in _CLOSE)
        if depth == 0 and i < len(text) - 1:
            return False
    return True


def _conjunct(expr: str, start: int, end: int) -> bool:
    """Whether ``expr[start:end]`` is reached from ``expr`` through top-level ANDs and
    parentheses only."""
    depths = _depths(expr)
    if any(depths[m.start()] == 0 for m in _LOOSER.finditer(expr)):
        return False
    cuts = [m for m in _AND.finditer(expr) if depths[m.start()] == 0]
    bounds = [0, *(x for m in cuts for x in (m.start(), m.end())), len(expr)]
    for lo, hi in zip(bounds[::2], bounds[1::2], strict=True):
        if lo <= start and end <= hi:
            part = expr[lo:hi]
            pad = len(part) - len(part.lstrip())
            part = part.strip()
            if part == expr[start:end]:
                return True
            if _wrapped(part):
                inner = lo + pad + 1
                return _conjunct(expr[inner : lo + pad + len(part) - 1], start - inner, end - inner)
            return False
    return False


def tenant_conjunct(code: str, pattern: str) -> bool:
    """Some match of ``pattern`` in ``code`` is an AND-conjunct of the FILTER, SEARCH or
    PRUNE clause it sits in (``code`` without comments and strings)."""
    depths = _depths(code)
    clauses = list(_CLAUSE.finditer(code))
    for match in re.finditer(pattern, code):
        level = depths[match.start()]
        owner = [c for c in clauses if c.end() <= match.start() and depths[c.start()] <= level]
        if not owner:
            continue
        begin = owner[-1].end()
        base = depths[owner[-1].start()]
        stop = begin
        while stop < len(code):
            ch = code[stop]
            if ch in _CLOSE and depths[stop] <= base:
                break
            ending = _CLAUSE_END.match(code, stop)
            if ending and depths[stop] == base and (stop == 0 or not code[stop - 1].isalnum()):
                break
            stop += 1
        if match.end() <= stop and _conjunct(
            code[begin:stop], match.start() - begin, match.end() - begin
        ):
            return True
    return False


# AQL functions the queries may call: each is documented for ArangoDB 3.12 (vector
# functions from 3.12.4). A name outside this list is most likely a typo the server would
# only report at run time (error 1540 "usage of unknown function").
KNOWN_FUNCTIONS = frozenset(
    {
        "ANALYZER", "APPEND", "APPROX_NEAR_COSINE", "BM25", "CONCAT", "COSINE_SIMILARITY",
        "COUNT", "FIRST", "HAS", "INTERSECTION", "IS_NULL", "KEEP", "LAST", "LENGTH", "LOWER",
        "MAX", "MERGE", "MIN", "NOT_NULL", "PHRASE", "POSITION", "REGEX_TEST", "RIGHT", "SORTED",
        "SORTED_UNIQUE",
        "SHARD_ID", "STARTS_WITH",
        "SUM", "TOKENS", "UNION", "UNION_DISTINCT", "UNIQUE", "UNSET",
    }
)  # fmt: skip
_KEYWORDS_BEFORE_PAREN = frozenset({"AND", "OR", "NOT", "IN", "UPDATE", "REPLACE", "RETURN"})
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_PAIRS = {")": "(", "]": "[", "}": "{"}

# Text that is AQL and not SQL or prose: loops, filters, returns, AQL-shaped writes.
AQL_SHAPE = re.compile(
    r"\bFOR\s+\w+(?:\s*,\s*\w+)*\s+IN\b"
    r"|\bFILTER\b|\bRETURN\b|\bUPSERT\b|\bCOLLECT\b"
    r"|\bINSERT\s+(?:\{|@|MERGE\b)"
    r"|\bUPDATE\s+\w+\s+WITH\b"
    r"|\bREMOVE\s+\w+\s+IN\b"
)


# 1 + 3: the query files ------------------------------------------------------------------
def lint_tenant_filter(query: Query) -> list[str]:
    """Problems of one query with the tenant filter; admin queries are exempt by design."""
    if query.admin:
        return []
    code = strip_comments_and_strings(query.text)
    where = f"aql/{query.name}.aql"
    problems: list[str] = []
    touches = any(re.search(rf"\b{name}\b", code) for name in TENANT_SOURCES)
    touches = touches or "@@" in code
    if not touches:
        return problems
    if "tenant" not in query.params:
        problems.append(f"{where}: touches a tenant collection but never binds @tenant")
    loops = list(_FOR.finditer(code))
    depths = _depths(code)
    for loop in loops:
        names = [v.strip() for v in loop.group("vars").split(",")]
        src = loop.group("src")
        rest = code[loop.start() : _scope_end(depths, loop.start())]
        if _TRAVERSAL.search(src):
            if len(names) < 3:
                problems.append(f"{where}: traversal must bind a path variable (v, e, p)")
                continue
            p = names[2]
            for part in ("vertices", "edges"):
                pat = rf"\b{p}\.{part}\[\*\]\.tenant\s+ALL\s*==\s*@tenant\b"
                if not tenant_conjunct(rest, pat):
                    problems.append(
                        f"{where}: traversal does not filter {p}.{part}[*].tenant ALL == @tenant "
                        "(as an AND-conjunct of a FILTER or PRUNE)"
                    )
            continue
        source = src.strip()
        is_tenant_source = source in TENANT_SOURCES or source.startswith("@@")
        pattern = rf"\b{names[0]}\.tenant\s*==\s*@tenant\b"
        if is_tenant_source and not tenant_conjunct(rest, pattern):
            problems.append(
                f"{where}: loop over {source} lacks the filter {names[0]}.tenant == @tenant "
                "(as an AND-conjunct of a FILTER or SEARCH)"
            )
    for match in _UPSERT_OBJECT.finditer(code):
        if not _TENANT_FIELD.search(match.group(1)):
            problems.append(f"{where}: upsert search object lacks tenant: @tenant")
    for match in _UPSERT_FILTER.finditer(code):
        if not tenant_conjunct("FILTER " + match.group(1), r"\bCURRENT\.tenant\s*==\s*@tenant\b"):
            problems.append(f"{where}: upsert filter lacks CURRENT.tenant == @tenant")
    for match in _INSERT.finditer(code):
        if not _TENANT_FIELD.search(match.group("expr")):
            problems.append(f"{where}: insert does not force tenant: @tenant into the document")
    if _MODIFY.search(code) and not loops and "UPSERT" not in code:
        problems.append(f"{where}: update/replace/remove outside a tenant-filtered loop")
    return problems


def lint_aql_syntax(query: Query) -> list[str]:
    """Cheap syntax checks: balanced brackets and only known function names."""
    code = strip_comments_and_strings(query.text)
    where = f"aql/{query.name}.aql"
    problems: list[str] = []
    stack: list[str] = []
    for ch in code:
        if ch in "([{":
            stack.append(ch)
        elif ch in _PAIRS and (not stack or stack.pop() != _PAIRS[ch]):
            problems.append(f"{where}: unbalanced {ch!r}")
            return problems
    if stack:
        problems.append(f"{where}: unclosed {stack[-1]!r}")
    for name in _CALL.findall(code):
        if name.upper() not in _KEYWORDS_BEFORE_PAREN and name not in KNOWN_FUNCTIONS:
            problems.append(f"{where}: unknown AQL function {name}()")
    return problems


_UNSET = re.compile(r"\bUNSET\(\s*([A-Za-z_]\w*)\s*,(?P<args>[^()]*)\)")
_LITERAL = re.compile(r'"([^"\\]*)"')


_EMPTY_UPDATE = re.compile(r"\bUPDATE\s+(?:[A-Za-z_]\w*\s+WITH\s*)?\{\s*\}")


def lint_empty_updates(query: Query) -> list[str]:
    """``UPDATE doc WITH {}`` (or an UPSERT's ``UPDATE {}``) writes nothing since ArangoDB
    3.10 (no new revision, nothing replicated; docs-hugo 3.12 release-notes version-3.10
    incompatible-changes-in-3-10.md, "Empty Document Updates"), so it cannot hold a
    document against a concurrent writer (one that removes it, say); a query that means
    to touch a document must change an attribute."""
    code = strip_comments_and_strings(query.text)
    if _EMPTY_UPDATE.search(code):
        return [f"aql/{query.name}.aql: UPDATE ... WITH {{}} writes nothing since ArangoDB 3.10"]
    return []


def lint_vector_attributes(query: Query) -> list[str]:
    """Each ``UNSET(m, ...)`` of a variable looping over memories names every vector
    attribute (the text is read with its string literals: they are the attribute names)."""
    code = strip_comments_and_strings(query.text)
    over_memories = {
        v.strip()
        for loop in _FOR.finditer(code)
        if loop.group("src").strip() in ("memories", "memories_view")
        for v in loop.group("vars").split(",")[:1]
    }
    problems: list[str] = []
    for match in _UNSET.finditer(query.text):
        if match.group(1) not in over_memories:
            continue
        named = set(_LITERAL.findall(match.group("args")))
        missing = [a for a in VECTOR_ATTRIBUTES if a not in named]
        if missing:
            problems.append(f"aql/{query.name}.aql: UNSET({match.group(1)}, ...) keeps {missing}")
    return problems


def lint_aql_dir(directory: Path = AQL_DIR) -> list[str]:
    """Header == usage for every file, then the tenant filter of every tenant query."""
    problems: list[str] = []
    files = sorted(directory.glob("*.aql"))
    if not files:
        return [f"{directory}: no .aql files found"]
    for path in files:
        try:
            query = parse_query(path.stem, path.read_text(encoding="utf-8"))
        except StoreError as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        problems.extend(lint_aql_syntax(query))
        problems.extend(lint_tenant_filter(query))
        problems.extend(lint_vector_attributes(query))
        problems.extend(lint_empty_updates(query))
    return problems


# 2: the call sites -------------------------------------------------------------------------
def _enclosing_functions(tree: ast.AST) -> dict[int, str]:
    """id(call node) -> name of the innermost function that contains it."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, ast.FunctionDef) else func
            if isinstance(child, ast.Call):
                owner[id(child)] = func
            visit(child, name)

    visit(tree, "<module>")
    return owner


VIEW_BIND_KEYS = frozenset(view_binds(TemporalView(as_of=0)))


def _is_view_binds(node: ast.expr) -> bool:
    """``view_binds(...)``: the one spread a call site may use, its keys known."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "view_binds"
    )


def lint_call_sites_in_source(
    source: str, filename: str, registry: Registry, used: set[str] | None = None
) -> list[str]:
    """Call sites of one module: literal name, literal dict, exactly the declared params."""
    tree = ast.parse(source, filename=filename)
    owners = _enclosing_functions(tree)
    problems: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        method = node.func.attr
        if method not in QUERY_METHODS or owners.get(id(node)) in QUERY_METHODS:
            continue  # not a query call, or a forwarder that passes its own arguments on
        where = f"{filename}:{node.lineno}"
        if not node.args or not (
            isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
        ):
            problems.append(f"{where}: {method}() needs a literal query name")
            continue
        name = node.args[0].value
        try:
            query = registry.get(name)
        except StoreError:
            problems.append(f"{where}: unknown query {name!r} (no aql/{name}.aql)")
            continue
        if used is not None:
            used.add(name)
        admin_call = method == "run_admin"
        if query.admin != admin_call:
            problems.append(
                f"{where}: {name!r} is {'an admin' if query.admin else 'a tenant'} query; "
                f"call it with {'run_admin' if query.admin else 'run/_run'}",
            )
            continue
        index = QUERY_METHODS[method]
        arg: ast.expr | None = node.args[index] if len(node.args) > index else None
        for kw in node.keywords:
            if kw.arg == "params":
                arg = kw.value
        if not isinstance(arg, ast.Dict) or any(
            not (isinstance(k, ast.Constant) and isinstance(k.value, str))
            and not (k is None and _is_view_binds(v))
            for k, v in zip(arg.keys, arg.values, strict=True)
        ):
            problems.append(
                f"{where}: {name!r} params must be a dict literal with literal keys "
                "(or a spread of view_binds(...))"
            )
            continue
        passed = {str(k.value) for k in arg.keys if isinstance(k, ast.Constant)}
        if None in arg.keys:
            passed |= VIEW_BIND_KEYS
        expected = set(query.params) - ({"tenant"} if not query.admin else set())
        if "tenant" in passed and not query.admin:
            problems.append(f"{where}: {name!r} passes 'tenant'; it comes from the Scope")
        if passed - {"tenant"} != expected:
            problems.append(
                f"{where}: {name!r} passes {sorted(passed)}, the query declares "
                f"{sorted(expected)} (+ tenant from the Scope)",
            )
    return problems


def lint_call_sites(directory: Path = BACKEND_DIR, registry: Registry | None = None) -> list[str]:
    """All call sites of the backend, plus registered queries that nothing calls."""
    registry = registry or Registry.load()
    used: set[str] = set()
    problems: list[str] = []
    for path in sorted(directory.glob("*.py")):
        problems.extend(
            lint_call_sites_in_source(path.read_text(encoding="utf-8"), path.name, registry, used)
        )
    problems.extend(f"aql/{n}.aql is never called" for n in registry.names() if n not in used)
    return problems


# 4: no AQL built by formatting ------------------------------------------------------------
def _constant_text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def lint_formatting_in_source(source: str, filename: str) -> list[str]:
    """f-strings, %, .format and + concatenation whose literal text looks like AQL."""
    tree = ast.parse(source, filename=filename)
    problems: list[str] = []
    for node in ast.walk(tree):
        text: str | None = None
        how = ""
        if isinstance(node, ast.JoinedStr):
            text = "".join(_constant_text(v) or " " for v in node.values)
            how = "an f-string"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
            parts = [t for t in (_constant_text(node.left), _constant_text(node.right)) if t]
            if parts and not all(_constant_text(x) for x in (node.left, node.right)):
                text = " ".join(parts)
                how = "'%' formatting" if isinstance(node.op, ast.Mod) else "'+' concatenation"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
        ):
            text = _constant_text(node.func.value)
            how = "str.format"
        if text and AQL_SHAPE.search(text):
            line = getattr(node, "lineno", 0)
            problem = f"{filename}:{line}: AQL-looking text built with {how}"
            if problem not in problems:  # nested a + b + c reports once per line
                problems.append(problem)
    return problems


def lint_no_aql_formatting(directory: Path = PACKAGE_DIR) -> list[str]:
    problems: list[str] = []
    for path in sorted(directory.rglob("*.py")):
        rel = path.relative_to(directory.parent).as_posix()
        problems.extend(lint_formatting_in_source(path.read_text(encoding="utf-8"), rel))
    return problems


# 5: computed numbers against the collection schema ----------------------------------------
_WRITE = re.compile(
    r"\b(?:INSERT|UPDATE|REPLACE)\b(?P<body>.*?)\bIN\s+(?P<col>[A-Za-z_]\w*)\b", re.S
)
_FIELD = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*:\s*(?P<expr>[^,{}]+)")
_ARITHMETIC = re.compile(r"[\w.@)\]]\s*[-+*/%]\s*[\w.@(]")


def lint_computed_numbers(query: Query, schema: dict[str, object]) -> list[str]:
    """Attributes written as ``a + b`` (etc.) whose schema type does not admit a double."""
    code = strip_comments_and_strings(query.text)
    rules: dict[str, dict[str, object]] = {}
    for spec in schema["collections"]:  # type: ignore[attr-defined]
        rules[spec["name"]] = spec["schema"]["rule"].get("properties", {})
    problems: list[str] = []
    for write in _WRITE.finditer(code):
        props = rules.get(write.group("col"), {})
        for field in _FIELD.finditer(write.group("body")):
            if not _ARITHMETIC.search(field.group("expr")):
                continue
            rule = props.get(field.group("name"))
            types = rule.get("type") if isinstance(rule, dict) else None
            allowed = {types} if isinstance(types, str) else set(types or ())
            if "integer" in allowed and "number" not in allowed:
                problems.append(
                    f"{query.name}: {write.group('col')}.{field.group('name')} is computed by "
                    'AQL arithmetic (a double) but the schema allows only "integer"',
                )
    return problems


def lint_computed_numbers_dir(registry: Registry | None = None) -> list[str]:
    from attestor_arango.store.arango.schema import load_schema

    schema = load_schema(REPO_ROOT / "schemas")
    problems: list[str] = []
    for query in registry or Registry.load(AQL_DIR):
        problems.extend(lint_computed_numbers(query, schema))
    return problems


def run_all() -> list[str]:
    """Every lint over the real tree (what the test suite asserts is empty)."""
    out: list[str] = []
    for problems in _all():
        out.extend(problems)
    return out


def _all() -> Iterable[list[str]]:
    yield lint_aql_dir()
    yield lint_call_sites()
    yield lint_computed_numbers_dir()
    yield lint_no_aql_formatting()
