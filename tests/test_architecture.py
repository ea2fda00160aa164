"""The package's shape, as docs/architecture.md draws it, checked against its imports.

Every import counts, including those inside functions and under ``TYPE_CHECKING``:
a type-only import still ties the two modules' designs together. The tests fail on
an import circle, on a module importing from a layer above its own, and on a module
that has grown past the size a reader can hold in mind.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attestor_arango"

# Lowest first; a module may import its own layer and the layers below it only.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "errors",
            "models",
            "scope",
            "context",
            "clock",
            "ids",
            "config",
            "validation",
            "jsontext",
            "memo",
            "version",
            "lazy",
            "reports",
            "text",
            "cancel",
        ),
    ),
    ("store", ("store",)),
    ("services", ("core", "retrieval", "ingest", "governance", "embeddings", "llm")),
    ("facade", ("memory",)),
    ("interfaces", ("interfaces", "client", "__main__")),
]
# the package itself re-exports the public names (AgentMemory lazily)
TOP = "attestor_arango"

# memory.py is the whole public API in one class (no mixins), about 40 methods that each
# resolve the context, check the permission, validate and delegate: their signatures alone
# (Attestor's names and keywords, which REST, MCP and the client learn from) take ~250
# lines, so it is longer than the other modules by design, and nothing else may be. The
# cap sits just above its size, so logic that creeps back into the facade shows here.
MAX_LINES = 450
LONG_BY_DESIGN = {"attestor_arango.memory": 650}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> Iterator[str]:
    """The package modules a file imports, wherever the import statement stands."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name not in MODULES and "." in name:
                    name = name.rsplit(".", 1)[0]
                if name in MODULES:
                    yield name
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:
                raise AssertionError(f"{path}: relative import; the package uses absolute ones")
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in MODULES:
                    yield full
                elif node.module in MODULES:
                    yield node.module


GRAPH = {name: set(_imports(path)) - {name} for name, path in MODULES.items()}


def layer_of(module: str) -> int:
    """The index in LAYERS of a module (the package itself is above every layer)."""
    if module == TOP:
        return len(LAYERS)
    first = module.split(".")[1]
    for index, (_, roots) in enumerate(LAYERS):
        if first in roots:
            return index
    raise AssertionError(f"{module} belongs to no layer: add its folder to LAYERS and the docs")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_is_in_a_layer() -> None:
    assert len(MODULES) > 50  # the walk found the package
    for module in MODULES:
        layer_of(module)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_the_package() -> None:
    assert _cycles(GRAPH) == []


def test_imports_point_down_only() -> None:
    upward = [
        f"{module} ({LAYERS[layer_of(module)][0]}) imports {target} "
        f"({LAYERS[layer_of(target)][0] if target != TOP else 'package'})"
        for module, targets in sorted(GRAPH.items())
        for target in sorted(targets)
        if module != TOP and layer_of(target) > layer_of(module)
    ]
    assert upward == []


# Inside the services layer, lowest first: the model adapters, the recall pipeline (pure
# functions over a store), the core every operation shares (runtime, auditor, the one write
# path), then the services built on it. A package may import its own tier and those below.
SERVICE_TIERS: list[tuple[str, ...]] = [
    ("embeddings", "llm"),
    ("retrieval",),
    ("core",),
    ("ingest", "governance"),
]


def service_tier(module: str) -> int | None:
    """The index in SERVICE_TIERS of a service module (None outside the services layer)."""
    parts = module.split(".")
    for index, packages in enumerate(SERVICE_TIERS):
        if len(parts) > 1 and parts[1] in packages:
            return index
    return None


def upward_service_imports(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for module, targets in sorted(graph.items()):
        tier = service_tier(module)
        for target in sorted(targets):
            to = service_tier(target)
            if tier is not None and to is not None and to > tier:
                out.append(f"{module} imports {target}")
    return out


def test_service_tiers_cover_the_services_layer() -> None:
    services = dict(LAYERS)["services"]
    assert sorted(p for tier in SERVICE_TIERS for p in tier) == sorted(services)


def test_the_tier_check_sees_an_upward_import() -> None:
    probe = {f"{TOP}.core.writes": {f"{TOP}.governance.quotas", f"{TOP}.retrieval.config"}}
    assert upward_service_imports(probe) == [f"{TOP}.core.writes imports {TOP}.governance.quotas"]


def test_services_import_their_own_tier_and_below_only() -> None:
    """core is below governance and ingest: an arrow from core up to them is a circle in
    the design (governance's quota functions take core's Runtime and Auditor)."""
    assert upward_service_imports(GRAPH) == []


@pytest.mark.parametrize("service", ["core", "retrieval", "ingest", "governance"])
def test_services_never_import_the_facade_or_an_interface(service: str) -> None:
    offenders = [
        (module, target)
        for module, targets in GRAPH.items()
        if module.startswith(f"{TOP}.{service}")
        for target in targets
        if target in {f"{TOP}.memory", f"{TOP}.client", TOP} or ".interfaces" in target
    ]
    assert offenders == []


def test_the_store_knows_nothing_of_the_services() -> None:
    assert layer_of(f"{TOP}.store.embedded.store") < layer_of(f"{TOP}.retrieval.pipeline")
    for module, targets in GRAPH.items():
        if module.startswith(f"{TOP}.store"):
            assert all(layer_of(t) <= layer_of(module) for t in targets), module


def test_no_module_outgrows_a_reading() -> None:
    too_long = {
        module: lines
        for module, path in MODULES.items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines()))
        > LONG_BY_DESIGN.get(module, MAX_LINES)
    }
    assert too_long == {}


def test_no_mixins_and_no_casts_to_the_facade() -> None:
    for path in MODULES.values():
        text = path.read_text(encoding="utf-8")
        assert "Mixin" not in text, path
        assert 'cast("AgentMemory"' not in text, path


def _asserts(source: str) -> list[int]:
    """Lines of ``assert`` statements: ``python -O`` strips them, so an invariant the code
    relies on at run time must ``raise`` instead."""
    return [n.lineno for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assert)]


def test_the_assert_finder_finds_one() -> None:
    assert _asserts("def f(x):\n    assert x\n    return x\n") == [2]


def test_runtime_invariants_raise_instead_of_asserting() -> None:
    found = {
        module: lines
        for module, path in MODULES.items()
        if (lines := _asserts(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_test_tooling_is_not_shipped() -> None:
    for name in ("testing", "lints", "scripted"):
        assert not any(m.endswith(f".{name}") for m in MODULES), name


# the one configuration reader: every environment variable the package honours is named,
# and read, in config.py (its ``environment()``), so a reader finds them all in one place
ENV_READERS = {f"{TOP}.config"}
_ENV_ATTRIBUTES = {"environ", "environb", "getenv", "getenvb"}


def _reads_environment(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return (
            node.attr in _ENV_ATTRIBUTES
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        )
    if isinstance(node, ast.ImportFrom):
        return node.module == "os" and any(a.name in _ENV_ATTRIBUTES for a in node.names)
    return False


def _environment_reads(path: Path) -> list[int]:
    """Lines that touch os.environ / os.getenv (an attribute, or a name imported from os)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [getattr(node, "lineno", 0) for node in ast.walk(tree) if _reads_environment(node)]


def test_the_environment_reader_finds_a_read() -> None:
    probe = PACKAGE / "config.py"
    assert _environment_reads(probe)  # config.py reads it: the walk sees os.environ


def test_only_config_reads_the_environment() -> None:
    readers = {
        module: lines
        for module, path in MODULES.items()
        if module not in ENV_READERS and (lines := _environment_reads(path))
    }
    assert readers == {}


# services typed against the role they use: a function that takes the whole ``Store``
# but only calls one role's methods (directly, or by handing the store to a function
# typed with that role) should say so, so its reader and mypy know what it touches
SERVICES = ("core", "retrieval", "ingest", "governance")


def _store_roles() -> dict[str, set[str]]:
    tree = ast.parse((PACKAGE / "store" / "protocol.py").read_text(encoding="utf-8"))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    roles = {}
    for base in classes["Store"].bases:
        name = ast.unparse(base)
        if name in classes:
            body = classes[name].body
            roles[name] = {n.name for n in body if isinstance(n, ast.FunctionDef)} | {
                n.target.id
                for n in body
                if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            }
    return roles


ROLES = _store_roles()
_TREES: dict[str, ast.Module] = {}


def _tree(module: str) -> ast.Module:
    if module not in _TREES:
        _TREES[module] = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return _TREES[module]


def _names(module: str) -> dict[str, tuple[str, str | None]]:
    """What each top-level name means: (module, function) or (module, None) for a module."""
    out: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                out[alias.asname or alias.name] = (
                    (full, None) if full in MODULES else (node.module, alias.name)
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    out[alias.asname] = (alias.name, None)
    for node in _tree(module).body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = (module, node.name)
    return out


def _annotation(module: str, call: ast.Call, arg: ast.expr) -> str | None:
    """The annotation of the parameter ``arg`` lands in, when the callee is in the package."""
    names = _names(module)
    func = call.func
    target: tuple[str, str | None] | None = None
    if isinstance(func, ast.Name):
        target = names.get(func.id)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        owner = names.get(func.value.id)
        if owner is not None and owner[1] is None:
            target = (owner[0], func.attr)
    if target is None or target[1] is None or target[0] not in MODULES:
        return None
    defs = [
        n for n in _tree(target[0]).body if isinstance(n, ast.FunctionDef) and n.name == target[1]
    ]
    if not defs:
        return None
    params = [*defs[0].args.posonlyargs, *defs[0].args.args]
    if arg in call.args:
        at = call.args.index(arg)
        chosen = params[at] if at < len(params) else None
    else:
        keyword = next(k.arg for k in call.keywords if k.value is arg)
        chosen = next((p for p in [*params, *defs[0].args.kwonlyargs] if p.arg == keyword), None)
    return None if chosen is None or chosen.annotation is None else ast.unparse(chosen.annotation)


def _store_needs(module: str, fn: ast.FunctionDef, param: str) -> set[str] | None:
    """The Store methods ``param`` is used for inside ``fn``; None when not every use is known."""
    needs: set[str] = set()
    known: set[int] = set()  # ids of the Name nodes accounted for
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == param:
                needs.add(node.attr)
                known.add(id(node.value))
        elif isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(arg, ast.Name) and arg.id == param:
                    role = _annotation(module, node, arg)
                    if role not in ROLES:
                        return None  # handed on as the whole Store, or to code we cannot see
                    needs |= ROLES[role]
                    known.add(id(arg))
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param]
    return needs if all(id(n) in known for n in uses) else None


def whole_store_params_that_fit_a_role(module: str) -> list[str]:
    found = []
    for fn in ast.walk(_tree(module)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for param in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
            if param.annotation is None or ast.unparse(param.annotation) != "Store":
                continue
            needs = _store_needs(module, fn, param.arg)
            fits = [role for role, methods in ROLES.items() if needs and needs <= methods]
            if fits:
                found.append(f"{module}.{fn.name}({param.arg}: Store) only needs {fits[0]}")
    return found


def test_the_role_check_sees_a_one_role_function() -> None:
    assert set(ROLES) >= {"MemoryStore", "LaneStore", "GraphStore", "AuditStore"}
    module = f"{TOP}.governance.audit_chain"
    tree = _tree(module)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "iter_chain")
    assert _store_needs(module, fn, "store") == {"read_audit"}


def test_services_take_the_narrowest_store_role() -> None:
    offenders = [
        line
        for module in sorted(MODULES)
        if module.split(".")[1:2] and module.split(".")[1] in SERVICES
        for line in whole_store_params_that_fit_a_role(module)
    ]
    assert offenders == []


def test_the_store_contract_carries_no_backend_detail() -> None:
    """Lane rows carry what every backend returns; a backend's own extras (the embedded
    text index's scoring terms, its cache names) stay in that backend."""
    import dataclasses

    from attestor_arango.store import protocol

    assert [f.name for f in dataclasses.fields(protocol.Hit)] == ["memory", "score"]
    fields = [f.name for f in dataclasses.fields(protocol.TextHit)]
    assert fields == ["id", "content", "t_created", "score"]
    lanes = {n for n in vars(protocol.LaneStore) if not n.startswith("_")}
    assert lanes == {"vector_candidates", "text_pool"}  # one form per lane
    source = (PACKAGE / "store" / "protocol.py").read_text(encoding="utf-8")
    for embedded_only in ("vector_cache", "text_cache", "memories_fts", "sqlite", "SQLite"):
        assert embedded_only not in source, embedded_only


def _package_bases(folder: Path) -> list[str]:
    """Classes of ``folder`` that inherit from a class defined in the package."""
    defined: set[str] = set()
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in folder.glob("*.py")}
    for tree in trees.values():
        defined |= {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    return [
        f"{path.name}: {node.name}({ast.unparse(base)})"
        for path, tree in sorted(trees.items())
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if ast.unparse(base) in defined
    ]


def test_the_embedded_store_is_assembled_not_inherited() -> None:
    """SQLiteStore holds components (docs/architecture.md); no chain of partial classes."""
    assert _package_bases(PACKAGE / "store" / "embedded") == []


# Interfaces that serve the memory take it as an AgentMemory, so mypy checks every call
# they make against the facade's signatures (the adapters for other frameworks take
# "anything with recall", by design, and are not listed).
TYPED_AGAINST_THE_FACADE = (
    "attestor_arango.interfaces.api.app",
    "attestor_arango.interfaces.api.metrics",
    "attestor_arango.interfaces.api.openapi",
    "attestor_arango.interfaces.mcp",
    "attestor_arango.interfaces.mcp_http",
    "attestor_arango.interfaces.ui.access",
    "attestor_arango.interfaces.ui.app",
    "attestor_arango.interfaces.cli.commands",
    "attestor_arango.interfaces.cli.maintenance",
)


def untyped_memory_params(tree: ast.Module) -> list[str]:
    """Parameters and fields named ``memory``/``mem`` annotated as anything but AgentMemory."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            name = node.arg if isinstance(node, ast.arg) else ast.unparse(node.target)
            text = ast.unparse(node.annotation).strip("'\"")
            if name in ("memory", "mem") and text != "AgentMemory":
                found.append(f"{name}: {text} (line {node.lineno})")
    return found


def test_the_facade_type_check_sees_an_untyped_memory() -> None:
    tree = ast.parse("def serve(memory: Any, mem: 'AgentMemory') -> None: ...")
    assert untyped_memory_params(tree) == ["memory: Any (line 1)"]


@pytest.mark.parametrize("module", TYPED_AGAINST_THE_FACADE)
def test_interfaces_are_typed_against_the_facade(module: str) -> None:
    assert untyped_memory_params(_tree(module)) == []
