"""The package's import structure: no module cycle and no two packages that import each other.

Every import counts: at module level, inside functions (call-time) and under ``if TYPE_CHECKING:``
(type-only), since each is a dependency a reader has to follow. A "package" is a top-level part of
distrain: a subpackage (``training``, ``distributed``, ...) or a module at the root (``registry``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from support.paths import ROOT

PACKAGE = ROOT / "src" / "distrain"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str], this: str | None = None) -> dict[str, set[str]]:
    """The distrain modules ``path`` (module ``this``) imports, each with how: ``top`` (module level),
    ``call`` (inside a function) or ``type`` (under ``if TYPE_CHECKING``)."""
    tree = ast.parse(path.read_text(), str(path))
    this = this or module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: dict[str, set[str]] = defaultdict(set)

    def visit(node: ast.AST, how: str) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                visit(child, "type")
            for child in node.orelse:
                visit(child, how)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.name].add(how)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found[submodule if submodule in modules else base].add(how)
        inner = "call" if how == "top" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else how
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, "top")
    return {name: kinds for name, kinds in found.items() if name in modules and name != this}


def import_graph() -> dict[str, dict[str, set[str]]]:
    """Every distrain module -> {imported distrain module: how}."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): imports_of(path, modules) for path in paths}


def cycles(graph: dict[str, set[str]] | dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
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


def package_of(module: str) -> str:
    """The top-level part of distrain a module belongs to (``distrain`` itself for the root package)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_edges(graph: dict[str, dict[str, set[str]]]) -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the module imports behind it."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, imported in graph.items():
        for target in imported:
            pair = (package_of(module), package_of(target))
            if pair[0] != pair[1]:
                edges[pair].append(f"{module} -> {target}")
    return edges


def mutual_packages(graph: dict[str, dict[str, set[str]]]) -> list[str]:
    """Each pair of packages that import each other, with the imports both ways."""
    edges = package_edges(graph)
    return [f"{a} <-> {b}: {sorted(edges[(a, b)])} / {sorted(edges[(b, a)])}"
            for a, b in sorted(edges) if a < b and (b, a) in edges]


def call_time_imports(graph: dict[str, dict[str, set[str]]]) -> int:
    """(module, imported module) edges made only inside functions."""
    return sum(kinds == {"call"} for imported in graph.values() for kinds in imported.values())


def test_the_graph_sees_imports_inside_functions_and_type_only_ones():
    graph = import_graph()
    # commands/train.py imports the worker's assembly only inside run(): the parser must still see that edge
    assert graph["distrain.commands.train"]["distrain.experiment.assemble"] == {"call"}
    assert "call" in graph["distrain.commands.train"]["distrain.runtime.launch"]


def test_a_type_only_import_counts(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from distrain.training import trainer\n")
    found = imports_of(module, {"distrain.training.trainer"}, this="distrain.probe")
    assert found == {"distrain.training.trainer": {"type"}}


def test_cycle_finder_reports_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_pair_finder_reports_two_packages_that_import_each_other():
    graph = {
        "distrain.data.loader": {"distrain.distributed.world": {"top"}},
        "distrain.distributed.balance": {"distrain.data.sampler": {"call"}},
        "distrain.models.model": {"distrain.data.fields": {"type"}},
    }
    found = mutual_packages(graph)
    assert len(found) == 1 and found[0].startswith("data <-> distributed")
    del graph["distrain.distributed.balance"]
    assert mutual_packages(graph) == []


def test_no_import_cycle_among_distrain_modules():
    graph = import_graph()
    found = cycles(graph)
    details = ["; ".join(f"{m} -> {sorted(set(graph[m]) & set(c))}" for m in c) for c in found]
    assert not found, "import cycles:\n" + "\n".join(details)


def test_no_two_packages_import_each_other():
    found = mutual_packages(import_graph())
    assert not found, "packages importing each other:\n" + "\n".join(found)


def test_the_package_root_holds_only_the_api_cli_registry_errors_plugins_and_pretrained():
    root = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert root == ["__init__.py", "__main__.py", "cli.py", "errors.py", "plugins.py", "pretrained.py",
                    "registry.py", "version.py"]


def test_no_module_is_over_500_lines():
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text().splitlines())) > 500}
    assert not long, long


def imported_packages(graph: dict[str, dict[str, set[str]]], package: str) -> set[str]:
    return {package_of(target) for module, imported in graph.items() if package_of(module) == package
            for target in imported} - {package}


def test_the_process_runtime_needs_neither_the_loop_nor_the_data():
    # runtime/ starts, watches and stops processes; the job-wide services it shares with the loop live in job/
    assert not imported_packages(import_graph(), "runtime") & {"training", "data"}


def test_the_job_services_stand_on_the_ground_floor():
    assert imported_packages(import_graph(), "job") <= {"errors"}
