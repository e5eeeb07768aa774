"""The package's layers, read from its imports: dependencies flow one way
(ARCHITECTURE "Layout"), no module imports itself back through another, services and jobs
build no SQL (every query lives in a repository), and ``schema/`` holds types and loaders: its
fields call resolvers, never a service or a repository."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "dealroom"

# Each layer may import only the layers listed for it (and itself). Modules at the package's
# top level that are not named here are its base (settings, logging): anyone may import them.
ALLOWED: dict[str, set[str]] = {
    "domain": set(),
    "agents": {"domain"},
    "persistence": {"domain"},
    "realtime": set(),
    "services": {"domain", "agents", "persistence", "realtime"},
    "jobs": {"domain", "agents", "persistence", "realtime", "services"},
    "resolvers": {"domain", "persistence", "realtime", "services", "schema"},
    "schema": {"domain", "persistence", "realtime", "services", "resolvers"},
}
COMPOSITION = {"app", "cli", "worker", "webapp", "server", "supervisor"}
"""The composition root: it wires every layer together and nothing imports it back."""


SCHEMA_MAY_IMPORT: dict[str, str] = {
    "dealroom.persistence.models": "the rows the types are built from",
    "dealroom.services.live.events": "MessageView and StageChangedEvent, which the types convert",
    "dealroom.services.notify.kinds": "Kind and Mode, enums the schema exposes as they are",
    "dealroom.services.ops.metrics": "the counters the schema's extensions count requests with",
}
"""What any ``schema/`` module may import at run time from ``services`` and ``persistence``:
value types and counters, never a function that reads or writes (a resolver calls those)."""
SCHEMA_WIRING: dict[str, frozenset[str]] = {
    "dealroom.schema.context": frozenset(
        {
            "dealroom.persistence.db",
            "dealroom.services.accounts.identity",
            "dealroom.services.clock",
            "dealroom.services.live.admission",
            "dealroom.services.live.heartbeats",
            "dealroom.services.live.rechecks",
            "dealroom.services.offers.provider",
            "dealroom.services.turns.runs",
            "dealroom.services.unit_of_work",
        }
    ),
}
"""Beyond :data:`SCHEMA_MAY_IMPORT`: the request context, which holds the app's parts and
resolves the caller. The loaders (``schema/loaders.py``) may read through any repository."""
SCHEMA_LOADERS = "dealroom.schema.loaders"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that runs, at module level or inside a function; imports under
    ``if TYPE_CHECKING:`` are for the type checker only and are skipped."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for other in node.orelse:
                yield from _runtime_imports(other)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(node)


def _resolve(name: str) -> str | None:
    """The most specific module of ours that ``name`` (a module or a module's attribute)
    names."""
    modules = _modules()
    while name:
        if name in modules:
            return name
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return None


@cache
def _graph() -> dict[str, frozenset[str]]:
    graph: dict[str, frozenset[str]] = {}
    for name, path in _modules().items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        targets: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found = [_resolve(alias.name) for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                found = [_resolve(f"{base}.{alias.name}") for alias in node.names]
            targets.update(t for t in found if t is not None and t != name)
        graph[name] = frozenset(targets)
    return graph


SQL_FREE = ("services", "jobs")
"""Layers that build no SQL: every query lives in a repository (STYLE "Layers")."""
SESSION_TYPES: dict[str, frozenset[str] | None] = {
    "sqlalchemy.ext.asyncio": frozenset(
        {"AsyncConnection", "AsyncEngine", "AsyncSession", "async_sessionmaker"}
    ),
    "sqlalchemy.exc": None,  # errors to catch, any of them
    "sqlalchemy.pool": frozenset({"QueuePool"}),  # the pool's type, to read its size
}
"""What those layers may import from SQLAlchemy: the session's types and its errors. Anything
else (``select``, ``update``, ``func``, ``and_``, a dialect's ``insert``, ``aliased``, ``text``,
``import sqlalchemy`` itself...) builds statements, which belongs in ``persistence``."""


def _sql_imports(module: str, tree: ast.AST) -> list[str]:
    """The SQLAlchemy names ``module`` imports beyond :data:`SESSION_TYPES` (every import,
    those for the type checker included), when its layer is one of :data:`SQL_FREE`."""
    if _layer(module) not in SQL_FREE:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"{module}: import {alias.name}"
                for alias in node.names
                if alias.name.split(".")[0] == "sqlalchemy"
            ]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] != "sqlalchemy":
                continue
            allowed = SESSION_TYPES.get(node.module, frozenset())
            found += [
                f"{module}: from {node.module} import {alias.name}"
                for alias in node.names
                if allowed is not None and alias.name not in allowed
            ]
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _schema_reaches_in(graph: dict[str, frozenset[str]]) -> list[str]:
    """The run-time imports of ``schema/`` modules into ``services`` or ``persistence`` beyond
    :data:`SCHEMA_MAY_IMPORT` and :data:`SCHEMA_WIRING`."""
    found = []
    for source, targets in graph.items():
        if _layer(source) != "schema":
            continue
        allowed = SCHEMA_MAY_IMPORT.keys() | SCHEMA_WIRING.get(source, frozenset())
        for target in targets:
            layer = _layer(target)
            if source == SCHEMA_LOADERS and layer == "persistence":
                continue
            if layer in {"services", "persistence"} and target not in allowed:
                found.append(f"{source} -> {target}")
    return sorted(found)


def _cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _wrong_way(graph: dict[str, frozenset[str]]) -> list[str]:
    arrows = []
    for source, targets in graph.items():
        layer = _layer(source)
        for target in targets:
            other = _layer(target)
            if other == layer:
                continue
            if other in COMPOSITION and layer not in COMPOSITION:
                arrows.append(f"{source} -> {target} (the composition root)")
            elif layer in ALLOWED and other in ALLOWED and other not in ALLOWED[layer]:
                arrows.append(f"{source} -> {target}")
    return sorted(arrows)


def test_the_graph_is_read_from_every_module() -> None:
    graph = _graph()
    assert "dealroom.domain.offer_stage" in graph
    assert "dealroom.jobs.runner" in graph["dealroom.jobs.wiring"]


def test_dependencies_flow_one_way() -> None:
    assert _wrong_way(_graph()) == []


def test_schema_calls_no_service_or_repository() -> None:
    assert _schema_reaches_in(_graph()) == []


def test_the_schema_allow_list_names_modules_that_exist() -> None:
    modules = _modules()
    named = SCHEMA_MAY_IMPORT.keys() | {m for wired in SCHEMA_WIRING.values() for m in wired}
    assert sorted(m for m in named if m not in modules) == []


@pytest.mark.parametrize(
    ("source", "target", "flagged"),
    [
        ("dealroom.schema.room_types", "dealroom.services.offers.reads", True),
        ("dealroom.schema.pane_types", "dealroom.persistence.links", True),
        ("dealroom.schema.types", "dealroom.services.clock", True),
        ("dealroom.schema.room_types", "dealroom.services.live.events", False),
        ("dealroom.schema.room_types", "dealroom.persistence.models", False),
        ("dealroom.schema.room_types", "dealroom.resolvers.room_fields", False),
        ("dealroom.schema.context", "dealroom.services.clock", False),
        ("dealroom.schema.loaders", "dealroom.persistence.offers", False),
        ("dealroom.schema.loaders", "dealroom.services.offers.reads", True),
        ("dealroom.resolvers.rooms", "dealroom.services.offers.reads", False),
    ],
)
def test_a_schema_reach_into_services_is_found(source: str, target: str, flagged: bool) -> None:
    assert bool(_schema_reaches_in({source: frozenset({target})})) is flagged


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_services_and_jobs_build_no_sql() -> None:
    found = [
        line
        for name, path in sorted(_modules().items())
        for line in _sql_imports(name, ast.parse(path.read_text(), str(path)))
    ]
    assert found == []


@pytest.mark.parametrize(
    ("module", "source", "flagged"),
    [
        ("dealroom.services.a", "from sqlalchemy import select", True),
        ("dealroom.jobs.a", "from sqlalchemy import func, or_", True),
        ("dealroom.services.a", "from sqlalchemy.dialects.postgresql import insert", True),
        ("dealroom.services.a", "from sqlalchemy.orm import aliased", True),
        ("dealroom.jobs.a", "import sqlalchemy as sa", True),
        ("dealroom.services.a", "def f() -> None:\n    from sqlalchemy import text", True),
        ("dealroom.services.a", "if TYPE_CHECKING:\n    from sqlalchemy import Select", True),
        ("dealroom.services.a", "from sqlalchemy.ext.asyncio import AsyncSession", False),
        ("dealroom.jobs.a", "from sqlalchemy.exc import IntegrityError", False),
        ("dealroom.jobs.a", "from dealroom.persistence.runs import RunRepository", False),
        ("dealroom.persistence.a", "from sqlalchemy import select", False),
    ],
)
def test_sql_built_outside_persistence_is_found(module: str, source: str, flagged: bool) -> None:
    assert bool(_sql_imports(module, ast.parse(source))) is flagged


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"dealroom.services.a": frozenset({"dealroom.jobs.b"})}, ["dealroom.services.a"]),
        ({"dealroom.domain.a": frozenset({"dealroom.persistence.b"})}, ["dealroom.domain.a"]),
        ({"dealroom.jobs.a": frozenset({"dealroom.services.b"})}, []),
    ],
)
def test_a_wrong_way_arrow_is_found(graph: dict[str, frozenset[str]], expected: list[str]) -> None:
    assert [arrow.split(" -> ")[0] for arrow in _wrong_way(graph)] == expected


def test_a_cycle_is_found() -> None:
    graph = {
        "dealroom.services.a": frozenset({"dealroom.services.b"}),
        "dealroom.services.b": frozenset({"dealroom.services.c"}),
        "dealroom.services.c": frozenset({"dealroom.services.a"}),
        "dealroom.services.d": frozenset({"dealroom.services.a"}),
    }
    assert _cycles(graph) == [["dealroom.services.a", "dealroom.services.b", "dealroom.services.c"]]
