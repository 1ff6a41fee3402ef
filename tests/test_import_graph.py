"""synth's packages import down a table of layers, and nowhere is there an import cycle.

Every import counts, at module level or inside a function. ``LAYERS`` lists the packages from the
bottom up; a module may import its own package and the layers below it, never a layer above and
never a sibling on its own layer (``contexts`` knows nothing of ``generate``, private modules or
public; what both need lives in ``stage`` below them).

The graph is read from the source with ``ast``, not by importing, so an import a test never runs
still counts. Imports under ``if TYPE_CHECKING:`` are left out: they never run, and are the way to
name a type without depending on its module. An import of ``pkg.mod`` is an edge to ``pkg.mod``
only, not to ``pkg``'s ``__init__`` as well: otherwise every module would close a cycle through
``synth/__init__.py``, which re-exports the public names. So a package's ``__init__`` importing its
own submodules is a cycle only when a submodule imports the package back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "synth"

# Cycles allowed, each as the sorted tuple of the modules in one strongly connected component.
# Keep it empty: a new cycle fails the test, and so does an entry that no longer happens.
ALLOWED_CYCLES: list[tuple[str, ...]] = []


#: the packages from the bottom up; one row is one layer. ``CORE`` is synth's root modules (the
#: records in ``data``, ``errors``, and the one-concept helpers ``_ids``, ``_files``, ``_journal``,
#: ``_manifest``...), which every package may use; ``synth`` itself is the public surface on top.
CORE = "synth's root modules"
LAYERS: list[tuple[str, ...]] = [
    (CORE,),
    ("synth.ingest", "synth.llm", "synth.tools"),  # readers and chunking; providers; tool sources
    ("synth.store",),  # embedders and Chroma: stores ingest's chunks, embeds through llm's clients
    ("synth.stage",),  # what LLM stages share: batching, calls, prompt templates, text, stats
    ("synth.contexts", "synth.generate"),  # stages 2-4; stages 5-10
    ("synth.run",),  # the run machinery that drives the stages; it hands over goldens, not datasets
    ("synth.dataset",),  # the goldens' file and its formats; review, refill and update of one
    ("synth.pipeline", "synth.evaluate"),  # Synthesizer; scoring a system against a dataset
    ("synth.report",),
    ("synth.review",),
    ("synth.cli", "synth.pytest_plugin"),  # the command, and pytest's entry point
    ("synth",),  # the lazy public names, and ``python -m synth``
]
#: imports the layers would allow that are kept out all the same: a report is drawn from a
#: dataset and its manifest (``synth._manifest`` finds it), never from the run machinery
KEPT_APART = {("synth.report", "synth.run")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and _type_checking_only(node):
            pending.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The synth modules that ``name`` imports, at any depth of its code."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    targets: set[str] = set()
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        source = _absolute(node, name, path.name == "__init__.py")
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            targets.add(submodule if submodule in modules else source)
    return {target for target in targets if target in modules and target != name}


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def unit_of(module: str) -> str:
    """The row of ``LAYERS`` that ``module`` belongs to: its package, or ``CORE`` for a root module."""
    parts = module.split(".")
    if module in ("synth", "synth.__main__"):
        return "synth"
    if len(parts) == 2 and module not in _ENTRY_MODULES and module not in _PACKAGES:
        return CORE
    return ".".join(parts[:2])


#: root modules with a layer of their own: the Synthesizer, and the pytest plugin (an entry point)
_ENTRY_MODULES = ("synth.pipeline", "synth.pytest_plugin")
_PACKAGES = {f"synth.{path.name}" for path in ROOT.iterdir() if (path / "__init__.py").is_file()}


def layer_of(unit: str) -> int:
    return next(number for number, row in enumerate(LAYERS) if unit in row)


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a layer above the importer's, or of a sibling on its own layer."""
    found = []
    for module in sorted(graph):
        unit = unit_of(module)
        for target in sorted(graph[module]):
            other = unit_of(target)
            if other == unit:
                continue
            if (unit, other) in KEPT_APART:
                found.append(f"{module} imports {target}, which its layer is kept apart from")
            elif layer_of(other) > layer_of(unit):
                found.append(f"{module} imports {target}, a layer above it")
            elif layer_of(other) == layer_of(unit):
                found.append(f"{module} imports {target}, a sibling on its own layer")
    return found


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Every strongly connected component of more than one module, sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []

    def visit(start: str) -> None:
        # iterative, so a deep chain of imports cannot hit the recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found)


def test_every_package_has_a_place_in_the_layers() -> None:
    placed = {unit for row in LAYERS for unit in row}
    unplaced = sorted({unit_of(module) for module in all_modules()} - placed)
    assert unplaced == [], f"add these to LAYERS in {Path(__file__).name}: {unplaced}"


def test_imports_point_down_the_layers() -> None:
    found = layer_violations(import_graph())
    assert not found, "imports against the layer order in synth/:\n" + "\n".join(found)


def test_no_import_cycle_in_synth() -> None:
    found = cycles(import_graph())
    unexpected = [cycle for cycle in found if cycle not in ALLOWED_CYCLES]
    assert not unexpected, "import cycles in synth/:\n" + "\n".join(map(" <-> ".join, unexpected))


def test_every_allowed_cycle_still_exists() -> None:
    found = cycles(import_graph())
    stale = [cycle for cycle in ALLOWED_CYCLES if cycle not in found]
    assert not stale, "cycles gone from synth/, remove them from ALLOWED_CYCLES:\n" + "\n".join(
        map(" <-> ".join, stale)
    )


# ---- the checker itself ------------------------------------------------------------------------
def test_layer_violations_catches_an_import_up_and_one_across() -> None:
    graph = {
        "synth.contexts.critic": {"synth.stage.batch", "synth.data", "synth.generate._text"},
        "synth.run.stream": {"synth.contexts.feed", "synth.report.dataset"},
        "synth.stage.batch": {"synth.llm.base"},
        "synth.report.dataset": {"synth._manifest", "synth.evaluate.report", "synth.run.dir"},
        "synth.data": {"synth.errors"},
    }
    assert layer_violations(graph) == [
        "synth.contexts.critic imports synth.generate._text, a sibling on its own layer",
        "synth.report.dataset imports synth.run.dir, which its layer is kept apart from",
        "synth.run.stream imports synth.report.dataset, a layer above it",
    ]


def test_unit_of_names_the_package_or_the_root() -> None:
    assert unit_of("synth.generate.stats") == "synth.generate"
    assert unit_of("synth.stage") == "synth.stage"
    assert unit_of("synth._journal") == CORE
    assert unit_of("synth.data") == CORE
    assert unit_of("synth.pipeline") == "synth.pipeline"
    assert unit_of("synth.__main__") == unit_of("synth") == "synth"


def test_cycles_finds_a_loop_and_ignores_a_chain() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [("a", "b", "c")]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_cycles_finds_two_separate_loops() -> None:
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "a"}}
    assert cycles(graph) == [("a", "b"), ("c", "d")]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import synth.pkg.b", {"synth.pkg.b"}),
        ("from synth.pkg import b", {"synth.pkg.b"}),
        ("from synth.pkg import name_in_init", {"synth.pkg"}),
        ("from . import b", {"synth.pkg.b"}),
        ("from .b import thing", {"synth.pkg.b"}),
        ("from .. import other", {"synth.other"}),
        ("def f():\n    from synth.pkg.b import thing", {"synth.pkg.b"}),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from synth.pkg.b import T",
            set(),
        ),
        ("if TYPE_CHECKING:\n    pass\nelse:\n    from synth.pkg.b import T", {"synth.pkg.b"}),
        ("import json", set()),
    ],
)
def test_imports_of_reads_every_form_of_import(
    tmp_path: Path, source: str, expected: set[str]
) -> None:
    path = tmp_path / "a.py"
    path.write_text(source + "\n", encoding="utf-8")
    modules = {name: path for name in ("synth.pkg", "synth.pkg.a", "synth.pkg.b", "synth.other")}
    assert imports_of("synth.pkg.a", path, modules) == expected
