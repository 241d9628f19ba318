"""The package's modules import each other without a cycle, counting imports made inside functions
(only ``if TYPE_CHECKING:`` blocks are left out: they never run)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "src" / "distrain"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The distrain modules ``path`` imports anywhere in its code, except under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(), str(path))
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in found if name in modules and name != this}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): imports_of(path, modules) for path in paths}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
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
            connect(node)
    return found


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    # commands/train.py imports the worker only inside run(): the parser must still see that edge
    assert "distrain.worker" in graph["distrain.commands.train"]
    assert "distrain.distributed.launch" in graph["distrain.commands.train"]


def test_cycle_finder_reports_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_among_distrain_modules():
    graph = import_graph()
    found = cycles(graph)
    details = ["; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert not found, "import cycles:\n" + "\n".join(details)
