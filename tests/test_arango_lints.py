"""The ArangoDB backend's offline lints: clean on the real tree, and able to fail.

Every lint gets at least one broken example it must catch, so a lint that silently stops
working (a regex that never matches) fails this file instead of passing vacuously.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from attestor_arango.errors import StoreError
from attestor_arango.store.arango.registry import (
    Query,
    Registry,
    parse_query,
    strip_comments_and_strings,
    used_bind_params,
)
from tests.support import aql_lints as lints

REGISTRY = Registry.load()


# the real tree ------------------------------------------------------------------------------
def test_every_aql_file_parses_and_filters_on_tenant() -> None:
    assert lints.lint_aql_dir() == []
    assert len(REGISTRY.names()) >= 30


def test_every_call_site_passes_exactly_the_declared_params() -> None:
    assert lints.lint_call_sites() == []


def test_no_aql_is_built_by_string_formatting_in_the_package() -> None:
    assert lints.lint_no_aql_formatting() == []


def test_run_all_is_clean() -> None:
    assert lints.run_all() == []


# 1. header == usage --------------------------------------------------------------------------
def _write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / f"{name}.aql").write_text(text, encoding="utf-8")
    return tmp_path


def test_used_params_ignore_comments_and_string_literals() -> None:
    text = (
        "// @params: tenant, @@col\n"
        "/* @ghost */ FOR d IN @@col FILTER d.tenant == @tenant "
        "AND d.x != \"@not_a_param\" AND d.y != '@neither' RETURN d // @trailing\n"
    )
    assert used_bind_params(text) == {"tenant", "@col"}
    assert parse_query("ok", text).params == {"tenant", "@col"}


@pytest.mark.parametrize(
    "text, fragment",
    [
        (
            "// @params: tenant\nFOR d IN memories FILTER d.tenant == @tenant "
            "AND d.id == @id RETURN d",
            "used but not declared: ['id']",
        ),
        (
            "// @params: tenant, id, extra\nFOR d IN memories FILTER d.tenant == @tenant "
            "AND d.id == @id RETURN d",
            "declared but not used: ['extra']",
        ),
        ("FOR d IN memories FILTER d.tenant == @tenant RETURN d", "exactly one '// @params:'"),
        (
            "// @params: tenant, @col\nFOR d IN @@col FILTER d.tenant == @tenant RETURN d",
            "bad bind parameter",
        ),
    ],
)
def test_header_mismatch_is_caught(tmp_path: Path, text: str, fragment: str) -> None:
    problems = lints.lint_aql_dir(_write(tmp_path, "broken", text))
    assert len(problems) == 1 and fragment in problems[0]


@pytest.mark.parametrize(
    "text, fragment",
    [
        (
            "// @params: tenant\nFOR d IN audit FILTER d.tenant == @tenant RETURN UNSET(d, 1",
            "unclosed '('",
        ),
        ("// @params: tenant\nFOR d IN audit FILTER d.tenant == @tenant RETURN d]", "unbalanced"),
        (
            "// @params: tenant\nFOR d IN audit FILTER d.tenant == @tenant RETURN UNSETT(d, 1)",
            "unknown AQL function UNSETT()",
        ),
    ],
)
def test_syntax_lint_catches_brackets_and_unknown_functions(text: str, fragment: str) -> None:
    problems = lints.lint_aql_syntax(parse_query("broken", text))
    assert problems and fragment in problems[0], problems


def test_registry_refuses_unknown_names_and_admin_misuse() -> None:
    with pytest.raises(StoreError, match="unknown AQL query"):
        REGISTRY.get("drop_everything")
    assert REGISTRY.get("admin_vector_stats").admin is True
    assert REGISTRY.get("memory_get").admin is False


# 2. call sites -------------------------------------------------------------------------------
GOOD_CALL = """
class S:
    def get(self, scope, mid):
        return self._run("memory_get", scope, {"namespace": scope.namespace, "id": mid})
"""


def _calls(src: str) -> list[str]:
    return lints.lint_call_sites_in_source(src, "example.py", REGISTRY)


def test_call_site_lint_accepts_a_correct_call() -> None:
    assert _calls(GOOD_CALL) == []


def test_call_site_lint_counts_the_keys_of_a_view_binds_spread() -> None:
    find = '"memory_find_active", scope, {"namespace": n, "entity": e, "category": c, %s}'
    assert _calls(f"self._run({find % '**view_binds(view)'})") == []
    missing = _calls(f"self._run({find % '**{}'})")
    assert missing and "dict literal" in missing[0], missing
    extra = _calls('self._run("memory_get", scope, {"namespace": n, "id": m, **view_binds(v)})')
    assert extra and "window_end" in extra[0], extra


@pytest.mark.parametrize(
    "src, fragment",
    [
        ('self._run("memory_get", scope, {"id": mid})', "passes ['id']"),
        ('self._run("memory_get", scope, {"namespace": n, "id": m, "extra": 1})', "extra"),
        (
            'self._run("memory_get", scope, {"namespace": n, "id": m, "tenant": t})',
            "passes 'tenant'",
        ),
        ('self._run(name, scope, {"id": mid})', "literal query name"),
        ('self._run("memory_get", scope, {**base, "id": mid})', "dict literal"),
        ('self._run("memory_get", scope, params)', "dict literal"),
        ('self._run("memory_gett", scope, {})', "unknown query"),
        ('self._run("admin_vector_stats", scope, {})', "admin query"),
        ('self.executor.run_admin("memory_get", {"namespace": 1, "id": 2})', "tenant query"),
        ('self._retrying("entity_upsert", scope, {"namespace": n, "key": k})', "passes"),
    ],
)
def test_call_site_lint_catches_broken_calls(src: str, fragment: str) -> None:
    problems = _calls(f"def f(self, scope, mid, n, m, t, base, params, name, k):\n    {src}\n")
    assert len(problems) == 1 and fragment in problems[0], problems


def test_call_site_lint_reports_queries_nobody_calls(tmp_path: Path) -> None:
    aql = tmp_path / "aql"
    aql.mkdir()
    (aql / "memory_get.aql").write_text(REGISTRY.get("memory_get").text, encoding="utf-8")
    (aql / "orphan.aql").write_text(
        "// @params: tenant\nFOR a IN audit FILTER a.tenant == @tenant RETURN a\n",
        encoding="utf-8",
    )
    code = tmp_path / "code"
    code.mkdir()
    (code / "mod.py").write_text(GOOD_CALL, encoding="utf-8")
    problems = lints.lint_call_sites(code, Registry.load(aql))
    assert problems == ["aql/orphan.aql is never called"]


# 3. tenant filter ----------------------------------------------------------------------------
def _q(text: str) -> Query:
    return parse_query("example", text)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("// @params: id\nFOR m IN memories FILTER m.id == @id RETURN m", "never binds @tenant"),
        (
            "// @params: tenant\nFOR m IN memories FILTER m.owner == @tenant RETURN m",
            "lacks the filter m.tenant == @tenant",
        ),
        (
            "// @params: tenant\nFOR m IN memories FOR x IN episodes FILTER m.tenant == @tenant "
            "RETURN [m, x]",
            "loop over episodes",
        ),
        (
            "// @params: tenant, @@c\nFOR d IN @@c FILTER d.other == @tenant REMOVE d IN @@c",
            "loop over @@c",
        ),
        (
            "// @params: tenant, s\nFOR s0 IN graph_nodes FILTER s0.tenant == @tenant AND "
            "s0.key == @s FOR v, e, p IN 1..2 ANY s0 relations FILTER "
            "p.vertices[*].tenant ALL == @tenant RETURN v",
            "p.edges[*].tenant ALL == @tenant",
        ),
        (
            "// @params: tenant, s\nFOR s0 IN graph_nodes FILTER s0.tenant == @tenant AND "
            "s0.key == @s FOR v IN 1..2 ANY s0 relations RETURN v",
            "path variable",
        ),
        (
            "// @params: tenant, s\nFOR s0 IN graph_nodes FILTER s0.tenant == @tenant AND "
            "s0.key == @s FOR v, e, p IN 1..2 ANY s0 relations FILTER "
            "p.vertices[*].tenant ALL == @tenant AND p.edges[*].tenant ALL == @tenant "
            "OR LENGTH(p.edges) == 1 RETURN v",
            "p.vertices[*].tenant ALL == @tenant",
        ),
        (
            "// @params: tenant, k\nUPSERT FILTER CURRENT.key == @k OR CURRENT.tenant == "
            "@tenant INSERT { tenant: @tenant, key: @k } UPDATE {} IN entities RETURN NEW",
            "upsert filter lacks",
        ),
        (
            "// @params: tenant, k\nUPSERT { key: @k } INSERT { tenant: @tenant, key: @k } "
            "UPDATE {} IN entities RETURN NEW",
            "upsert search object",
        ),
        (
            "// @params: tenant, doc\nINSERT MERGE(@doc, { owner: @tenant }) INTO memories "
            "RETURN NEW",
            "insert does not force",
        ),
        (  # a subquery's loop is not guarded by a later loop's filter on the same name
            "// @params: tenant, s\nLET top = FIRST(FOR m IN memories FILTER m.session_id == "
            "@s SORT m.valid_from DESC LIMIT 1 RETURN m.valid_from) FOR m IN memories FILTER "
            "m.tenant == @tenant AND m.valid_from == top RETURN m",
            "loop over memories lacks the filter m.tenant == @tenant",
        ),
    ],
)
def test_tenant_filter_lint_catches_missing_filters(text: str, fragment: str) -> None:
    problems = lints.lint_tenant_filter(_q(text))
    assert any(fragment in p for p in problems), problems


@pytest.mark.parametrize(
    "clause",
    [
        "m.id == @id OR m.tenant == @tenant",  # every tenant's row with that id
        "m.tenant == @tenant AND m.id == @id OR m.shared == true",  # AND binds first
        "m.tenant == @tenant AND m.id == @id ? true : false",
        "(m.tenant == @tenant OR m.id == @id)",
        "m.id == @id AND (m.tenant == @tenant || m.shared == true)",
        "NOT (m.tenant == @tenant) AND m.id == @id",
        "@id == null ? m.tenant == @tenant : m.id == @id",
        "LENGTH([m.tenant == @tenant]) > 0 AND m.id == @id",
    ],
)
def test_a_tenant_predicate_that_does_not_bind_every_row_is_caught(clause: str) -> None:
    """The predicate must be an AND-conjunct of its clause: under an OR, a NOT, a ternary
    or inside an expression it can be false while the clause holds for a foreign row."""
    text = f"// @params: tenant, id\nFOR m IN memories FILTER {clause} RETURN m"
    problems = lints.lint_tenant_filter(_q(text))
    assert any("lacks the filter m.tenant == @tenant" in p for p in problems), problems


@pytest.mark.parametrize(
    "text",
    [
        "// @params: tenant, id\nFOR m IN memories FILTER (m.id == @id AND "
        "(m.tenant == @tenant)) RETURN m",
        "// @params: tenant, id\nFOR m IN memories FILTER m.id == @id OR m.id == 'x' "
        "FILTER m.tenant == @tenant RETURN m",
        "// @params: tenant, id\nFOR m IN memories FILTER m.id == @id && m.tenant == @tenant "
        "RETURN m",
        "// @params: tenant, s\nFOR s0 IN graph_nodes FILTER s0.tenant == @tenant AND "
        "s0.key == @s FOR v, e, p IN 1..2 ANY s0 relations PRUNE p.edges[*].tenant ALL == "
        "@tenant AND (p.vertices[*].tenant ALL == @tenant) FILTER "
        "p.vertices[*].tenant ALL == @tenant AND p.edges[*].tenant ALL == @tenant RETURN v",
    ],
)
def test_tenant_predicates_under_and_and_parentheses_pass(text: str) -> None:
    assert lints.lint_tenant_filter(_q(text)) == []


def test_every_real_query_fails_the_tenant_lint_without_its_tenant_predicates() -> None:
    """Strip each real tenant query's tenant predicates: the lint must notice every time."""
    checked = 0
    for query in REGISTRY:
        if query.admin:
            continue
        text = re.sub(r"\.tenant(\s+ALL)?\s*==\s*@tenant", ".tenant != null", query.text)
        text = re.sub(r"\btenant\s*:\s*@tenant", 'tenant: "x"', text)
        mutated = Query(query.name, text, query.params, admin=False)
        assert lints.lint_tenant_filter(mutated), query.name
        checked += 1
    # the vector-index statistics, and the tenants init folds entity keys for (names only)
    admin = {"admin_vector_stats", "admin_vector_shards", "admin_entity_key_tenants"}
    assert {q.name for q in REGISTRY if q.admin} == admin
    assert checked == len(REGISTRY.names()) - len(admin)


# 4. no AQL by string formatting -------------------------------------------------------------
@pytest.mark.parametrize(
    "src, how",
    [
        ('q = f"FOR m IN {col} FILTER m.tenant == @tenant RETURN m"', "f-string"),
        ('q = "FOR m IN %s RETURN m" % col', "'%' formatting"),
        ('q = "FOR m IN {} RETURN m".format(col)', "str.format"),
        ('q = "FOR m IN " + col + " RETURN m"', "'+' concatenation"),
        ('q = f"UPSERT {{ tenant: @tenant }} INSERT {doc} UPDATE {{}} IN x"', "f-string"),
    ],
)
def test_formatting_lint_catches_built_aql(src: str, how: str) -> None:
    problems = lints.lint_formatting_in_source(src, "bad.py")
    assert len(problems) == 1 and how in problems[0]


@pytest.mark.parametrize(
    "src",
    [
        'q = f"SELECT {cols} FROM memories WHERE tenant = :tenant ORDER BY id LIMIT 1"',
        'q = f"INSERT INTO audit ({cols}) VALUES (:a) RETURNING seq"',
        'msg = f"memory {mid} is not open; for details see the docs"',
        'q = "FOR m IN memories RETURN m"  # a plain literal is fine',
    ],
)
def test_formatting_lint_leaves_sql_prose_and_literals_alone(src: str) -> None:
    assert lints.lint_formatting_in_source(src, "ok.py") == []


# computed numbers against the schema (issue 15, item 1) -------------------------------------
def test_no_computed_attribute_is_typed_integer_only() -> None:
    assert lints.lint_computed_numbers_dir() == []


def test_computed_numbers_lint_catches_an_integer_counter() -> None:
    schema = {
        "collections": [
            {
                "name": "write_counts",
                "schema": {"rule": {"properties": {"writes": {"type": "integer"}}}},
            }
        ]
    }
    upsert = parse_query(
        "writes_add",
        "// @params: tenant, n\nUPSERT { tenant: @tenant } INSERT { tenant: @tenant, writes: @n }"
        "\nUPDATE { writes: OLD.writes + @n } IN write_counts RETURN NEW",
    )
    [problem] = lints.lint_computed_numbers(upsert, schema)
    assert "write_counts.writes" in problem
    schema["collections"][0]["schema"]["rule"]["properties"]["writes"]["type"] = "number"
    assert lints.lint_computed_numbers(upsert, schema) == []
    bound = parse_query(
        "w", "// @params: tenant, n\nINSERT { tenant: @tenant, writes: @n } IN write_counts"
    )
    schema["collections"][0]["schema"]["rule"]["properties"]["writes"]["type"] = "integer"
    assert lints.lint_computed_numbers(bound, schema) == []


def test_optimizer_header_is_parsed_and_checked() -> None:
    head = "// @params: tenant\n"
    body = "FOR m IN memories FILTER m.tenant == @tenant RETURN m"
    query = parse_query("q", head + "// @optimizer: -use-indexes, +use-vector-index\n" + body)
    assert query.optimizer_rules == ("-use-indexes", "+use-vector-index")
    assert parse_query("q", head + body).optimizer_rules == ()
    with pytest.raises(StoreError, match="bad optimizer rules"):
        parse_query("q", head + "// @optimizer: use-indexes\n" + body)
    with pytest.raises(StoreError, match="at most one"):
        parse_query("q", head + "// @optimizer: -a\n// @optimizer: -b\n" + body)


# traversal filters the optimizer can push into the edge lookup (session 15) ----------------
# graph_hops*.aql walk with uniqueVertices "global": a vertex first reached over an invisible
# edge would be marked visited unless the visibility test runs while edges are looked up.
# TraversalConditionFinder (arangod Aql/TraversalConditionFinder.cpp) moves only AND-combined
# `p.edges[*].x ALL <op> v` / `p.vertices[*].x ALL <op> v` there, and nothing when the FILTER
# is an OR of several branches.
_PATH_TERM = re.compile(r"^p\.(edges|vertices)\[\*\]\.\w+ ALL (==|!=|<=|>=|<|>) @\w+$")


def traversal_filter_problems(text: str) -> list[str]:
    code = strip_comments_and_strings(text)
    block = code[code.index("FILTER", code.index("OPTIONS")) + len("FILTER") : code.index("RETURN")]
    problems: list[str] = []
    if re.search(r"\bOR\b|\|\|", block):
        problems.append("OR in the traversal FILTER: the optimizer pushes nothing down")
    for term in (t.strip() for t in re.split(r"\bAND\b", " ".join(block.split()))):
        if term.startswith("p.") and not _PATH_TERM.fullmatch(term):
            problems.append(f"path condition not in the ALL form: {term}")
    return problems


def test_hop_queries_keep_their_visibility_filter_pushable() -> None:
    for name in ("graph_hops", "graph_hops_ns"):
        text = REGISTRY.get(name).text
        assert "uniqueVertices" in text and traversal_filter_problems(text) == [], name
    good = REGISTRY.get("graph_hops").text
    broken_or = good.replace(
        "AND p.edges[*].t_expired ALL > @t_expired_after",
        "AND (p.edges[*].t_expired ALL > @t_expired_after OR @as_of == 0)",
    )
    assert traversal_filter_problems(broken_or)[0].startswith("OR in the traversal FILTER")
    broken_any = good.replace("p.edges[*].t_created ALL <=", "p.edges[*].t_created ANY <=")
    assert "not in the ALL form" in traversal_filter_problems(broken_any)[0]


# the shape useVectorIndexRule rewrites (session 15) ----------------------------------------
# arangod Aql/Optimizer/Rule/OptimizerRuleVectorIndex.cpp: after FOR over the collection, only
# calculations and ONE FilterNode may precede a SORT with a single APPROX_NEAR_* element
# (cosine: DESC) whose vector argument is the loop variable's indexed attribute and whose
# options, if any, are an object literal; a LIMIT must follow the SORT directly. Two FILTERs
# answer 1554 (tests/js/client/aql/vector/aql-vector-filter.js, multiple FILTER clauses).
def ann_shape_problems(text: str, field: str = "vector") -> list[str]:
    code = " ".join(strip_comments_and_strings(text).split())
    match = re.match(r"FOR (\w+) IN (\w+) (.*?) SORT (.*?) LIMIT (@\w+|\d+) RETURN ", code)
    if match is None:
        return ["no FOR ... SORT ... LIMIT ... RETURN skeleton"]
    var, _, between, sort, _ = match.groups()
    problems = []
    if len(re.findall(r"\bFILTER\b", between)) > 1:
        problems.append("more than one FILTER between FOR and SORT")
    if re.search(r"\b(FOR|COLLECT|SORT|LIMIT)\b", between):
        problems.append("another operation between FOR and SORT")
    near = re.fullmatch(
        rf"APPROX_NEAR_COSINE\({var}\.{field}, @\w+(?:, (\{{[^{{}}]*\}}))?\) DESC", sort
    )
    if near is None:
        problems.append(f"SORT is not APPROX_NEAR_COSINE({var}.{field}, @q[, {{...}}]) DESC")
    return problems


def test_the_ann_query_has_the_shape_the_vector_rule_rewrites() -> None:
    text = REGISTRY.get("vector_ann").text
    assert ann_shape_problems(text) == []
    two_filters = text.replace("AND m.t_created <= @as_of", "FILTER m.t_created <= @as_of", 1)
    assert ann_shape_problems(two_filters) == ["more than one FILTER between FOR and SORT"]
    ascending = text.replace("{ nProbe: @n_probe }) DESC", "{ nProbe: @n_probe }) ASC")
    assert "SORT is not" in ann_shape_problems(ascending)[0]
    options_by_bind = text.replace("{ nProbe: @n_probe }", "@options")
    assert "SORT is not" in ann_shape_problems(options_by_bind)[0]
    other_attribute = text.replace("APPROX_NEAR_COSINE(m.vector", "APPROX_NEAR_COSINE(m.embedding")
    assert "SORT is not" in ann_shape_problems(other_attribute)[0]


# 6. vector attributes stay out of returned rows ---------------------------------------------
@pytest.mark.parametrize(
    "text, fragment",
    [
        (
            "// @params: tenant\nFOR m IN memories FILTER m.tenant == @tenant "
            'RETURN UNSET(m, "_key", "vector")',
            "keeps ['vector_next']",
        ),
        (
            "// @params: tenant\nFOR m IN memories_view SEARCH m.tenant == @tenant "
            'RETURN MERGE(UNSET(m, "_key"), { x: 1 })',
            "keeps ['vector', 'vector_next']",
        ),
    ],
)
def test_vector_attribute_lint_catches_a_row_that_keeps_a_vector(text: str, fragment: str) -> None:
    problems = lints.lint_vector_attributes(parse_query("q", text))
    assert len(problems) == 1 and fragment in problems[0]


def test_every_query_returning_memory_documents_unsets_both_vector_attributes() -> None:
    checked = [q.name for q in REGISTRY if 'UNSET(m, "_key"' in q.text]
    assert len(checked) >= 8
    assert [p for q in REGISTRY for p in lints.lint_vector_attributes(q)] == []
    # an UNSET of another collection's variable is not held to it
    other = parse_query("e", '// @params: tenant\nFOR e IN entities FILTER e.tenant == @tenant '
                        'RETURN UNSET(e, "_key")')  # fmt: skip
    assert lints.lint_vector_attributes(other) == []


# 7. empty updates ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, caught",
    [
        (
            "// @params: tenant\nFOR s IN embedding_spaces FILTER s.tenant == @tenant "
            "UPDATE s WITH {} IN embedding_spaces RETURN NEW",
            True,
        ),
        (
            "// @params: tenant\nFOR s IN embedding_spaces FILTER s.tenant == @tenant "
            "UPDATE s WITH {  } IN embedding_spaces RETURN NEW",
            True,
        ),
        (
            "// @params: tenant\nFOR s IN embedding_spaces FILTER s.tenant == @tenant "
            "UPDATE s WITH { holds: 1 } IN embedding_spaces RETURN NEW",
            False,
        ),
        (  # an UPSERT's empty UPDATE branch does not hold the document it found either
            "// @params: tenant\nUPSERT { tenant: @tenant } INSERT { tenant: @tenant } "
            "UPDATE {} IN quotas RETURN NEW",
            True,
        ),
        (
            "// @params: tenant\nUPSERT { tenant: @tenant } INSERT { tenant: @tenant } "
            "UPDATE { uses: OLD.uses + 1 } IN quotas RETURN NEW",
            False,
        ),
    ],
)
def test_an_update_that_writes_nothing_is_caught(text: str, caught: bool) -> None:
    """A touch meant to hold a record (aql/space_hold.aql, graph_node_upsert.aql) is no
    write when empty."""
    assert bool(lints.lint_empty_updates(_q(text))) is caught
