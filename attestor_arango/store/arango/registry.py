"""The AQL registry: every query the ArangoDB backend may run, loaded from ``aql/``.

Each ``aql/<name>.aql`` file starts with a header that declares its bind parameters::

    // @params: tenant, namespace, id, @@collection

Value parameters are written without ``@``; collection parameters with ``@@`` (python-arango
expects the key ``"@collection"`` for them). A query that legitimately spans tenants (schema
and doctor statistics only) also says ``// @admin: <why>``; the executor runs those through a
separate entry point that takes no Scope and the lints hold them to that. A query may also
say ``// @optimizer: -rule-name, ...``: optimizer rules the executor switches on or off for
it (python-arango's ``optimizer_rules``), so the query's plan is part of the file.

The registry is the second lock of the tenant-filter layer: the executor runs only text it
read from these files, never text assembled at run time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources.abc import Traversable

from attestor_arango.errors import StoreError
from attestor_arango.store.arango.resources import data_dir

_HEADER_PARAMS = re.compile(r"^\s*//\s*@params:(?P<names>.*)$", re.MULTILINE)
_HEADER_ADMIN = re.compile(r"^\s*//\s*@admin:", re.MULTILINE)
_HEADER_OPTIMIZER = re.compile(r"^\s*//\s*@optimizer:(?P<rules>.*)$", re.MULTILINE)
_RULE = re.compile(r"^[+-][a-z0-9][a-z0-9-]*$")
_PARAM_NAME = re.compile(r"^@{0,2}[A-Za-z_][A-Za-z0-9_]*$")
_BIND_USE = re.compile(r"@@?[A-Za-z_][A-Za-z0-9_]*")
_QUERY_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def strip_comments_and_strings(text: str) -> str:
    """AQL text with comments removed and string/identifier literals blanked.

    What remains is what the server parses as code, so a ``@name`` inside a comment or a
    quoted string is not mistaken for a bind parameter. Quotes: ``"``, ``'`` and backticks
    (quoted names), each with backslash escapes.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if ch == "/" and nxt == "/":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == "/" and nxt == "*":
            end = text.find("*/", i + 2)
            if end < 0:
                raise StoreError("unterminated /* comment in AQL text")
            out.append(" ")
            i = end + 2
            continue
        if ch in "\"'`":
            j = i + 1
            while j < n and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise StoreError(f"unterminated {ch} literal in AQL text")
            out.append(ch + ch)  # keep an empty literal so the code stays well-formed
            i = j + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def used_bind_params(text: str) -> frozenset[str]:
    """Bind parameters the AQL code uses: ``name`` for ``@name``, ``@name`` for ``@@name``."""
    code = strip_comments_and_strings(text)
    return frozenset(m.group(0)[1:] for m in _BIND_USE.finditer(code))


def declared_bind_params(text: str) -> frozenset[str]:
    """Bind parameters named in the ``// @params:`` header (required, exactly once)."""
    headers = _HEADER_PARAMS.findall(text)
    if len(headers) != 1:
        raise StoreError(
            f"an AQL file needs exactly one '// @params:' header, found {len(headers)}"
        )
    names: set[str] = set()
    for raw in headers[0].split(","):
        name = raw.strip()
        if not name:
            continue
        if not _PARAM_NAME.fullmatch(name) or (name.startswith("@") and not name.startswith("@@")):
            raise StoreError(
                f"bad bind parameter {name!r} in '// @params:' header; write value parameters "
                "as plain names and collection parameters as @@name",
            )
        names.add(name[1:] if name.startswith("@@") else name)
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class Query:
    """One registered query: its text and the exact bind-variable keys it takes."""

    name: str
    text: str
    params: frozenset[str]  # python-arango bind_vars keys: "tenant", "@collection", ...
    admin: bool
    optimizer_rules: tuple[str, ...] = ()  # e.g. ("-use-indexes",); () = server defaults


def declared_optimizer_rules(text: str) -> tuple[str, ...]:
    """Rules named in an optional ``// @optimizer:`` header (``+name`` / ``-name`` each)."""
    headers = _HEADER_OPTIMIZER.findall(text)
    if len(headers) > 1:
        raise StoreError("an AQL file may have at most one '// @optimizer:' header")
    rules = tuple(r.strip() for r in headers[0].split(",") if r.strip()) if headers else ()
    bad = [r for r in rules if not _RULE.fullmatch(r)]
    if bad:
        raise StoreError(f"bad optimizer rules {bad}; write +rule-name or -rule-name")
    return rules


def parse_query(name: str, text: str) -> Query:
    """Validates one query file: header present, header == usage, legal name."""
    if not _QUERY_NAME.fullmatch(name):
        raise StoreError(f"AQL file name {name!r} must be lower_snake_case")
    declared = declared_bind_params(text)
    used = used_bind_params(text)
    if declared != used:
        missing = sorted(used - declared)
        unused = sorted(declared - used)
        raise StoreError(
            f"aql/{name}.aql: header and text disagree (used but not declared: {missing}; "
            f"declared but not used: {unused}); ArangoDB rejects both (errors 1551/1552)",
        )
    return Query(
        name=name,
        text=text,
        params=declared,
        admin=bool(_HEADER_ADMIN.search(text)),
        optimizer_rules=declared_optimizer_rules(text),
    )


class Registry:
    """All queries of a directory, by file stem. Unknown names are refused."""

    def __init__(self, queries: dict[str, Query]) -> None:
        self._queries = dict(queries)
        self._by_text = {q.text: q.name for q in queries.values()}

    @classmethod
    def load(cls, directory: Traversable | None = None) -> Registry:
        """Every ``*.aql`` file of ``directory`` (default: the installed or checked-out aql/).

        Raises ``StoreError`` when the directory is missing or holds no query, or when a
        file's header and text disagree.
        """
        directory = data_dir("aql") if directory is None else directory
        if not directory.is_dir():
            raise StoreError(
                f"AQL directory {directory} is missing; the ArangoDB backend needs the aql/ "
                "files that ship inside the attestor-arango package",
            )
        files = sorted(
            (f for f in directory.iterdir() if f.name.endswith(".aql") and f.is_file()),
            key=lambda f: f.name,
        )
        if not files:
            raise StoreError(f"AQL directory {directory} holds no .aql files; reinstall")
        queries = {}
        for entry in files:
            stem = entry.name.removesuffix(".aql")
            queries[stem] = parse_query(stem, entry.read_text(encoding="utf-8"))
        return cls(queries)

    def get(self, name: str) -> Query:
        try:
            return self._queries[name]
        except KeyError:
            raise StoreError(
                f"unknown AQL query {name!r}: only files in aql/ may run; add aql/{name}.aql",
            ) from None

    def name_of(self, text: str) -> str | None:
        """Which registered query this exact text is (used by tests to read what was sent)."""
        return self._by_text.get(text)

    def names(self) -> list[str]:
        return sorted(self._queries)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._queries.values())
