"""The shape of parallelism in the source: one device mesh, small classes in ``distributed/``, the order
``parallelize`` applies the parallelisms in, and a training loop that names no parallel library."""

from __future__ import annotations

import ast
from pathlib import Path

from support.paths import ROOT

PACKAGE = ROOT / "src" / "distrain"


def calls_named(tree: ast.AST, name: str) -> list[int]:
    """Line numbers of calls to ``name`` (``name(...)`` or ``something.name(...)``)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)]


def test_one_place_builds_a_device_mesh():
    sites = [f"{path.relative_to(PACKAGE)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
             for line in calls_named(ast.parse(path.read_text(), str(path)), "init_device_mesh")]
    assert sites == ["distributed/parallel_dims.py:" + sites[0].rpartition(":")[2]], sites


def test_the_mesh_finder_sees_a_call(tmp_path):
    tree = ast.parse("from torch.distributed.device_mesh import init_device_mesh\n"
                     "a = init_device_mesh('cpu', (2,))\nb = device_mesh.init_device_mesh('cpu', (2,))\n")
    assert calls_named(tree, "init_device_mesh") == [2, 3]


def methods(node: ast.ClassDef) -> int:
    """Functions defined in the class body (``__init__``, properties and class methods included)."""
    return sum(isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) for child in node.body)


def test_no_class_in_distributed_has_more_than_12_methods():
    counts = {f"{path.relative_to(PACKAGE)}:{node.name}": methods(node)
              for path in sorted((PACKAGE / "distributed").rglob("*.py"))
              for node in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(node, ast.ClassDef)}
    assert counts, "no class found"
    assert {name: count for name, count in counts.items() if count > 12} == {}


def function(path: Path, name: str) -> ast.FunctionDef:
    return next(node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)
                and node.name == name)


def test_parallelize_applies_the_parallelisms_in_one_visible_order():
    path = PACKAGE / "training" / "parallelize.py"
    body = function(path, "parallelize")
    first = {name: min(calls_named(body, name)) for name in ("build_mesh", "split", "cast_parameters",
                                                             "apply_activation_checkpointing", "apply",
                                                             "apply_compile")}
    order = sorted(first, key=first.get)
    assert order == ["build_mesh", "split", "cast_parameters", "apply_activation_checkpointing", "apply",
                     "apply_compile"], order
    step_one = function(path, "split")
    assert calls_named(step_one, "apply_tensor_parallel") and calls_named(step_one, "apply_pipeline")
    strategies = PACKAGE / "distributed" / "strategies"
    assert calls_named(function(strategies / "fsdp.py", "apply"), "apply_fsdp")
    assert calls_named(function(strategies / "ddp.py", "apply"), "apply_ddp")


def test_no_code_decides_by_the_strategys_type():
    """A strategy applies itself (``ParallelStrategy.apply``): nothing in the package asks which one it is."""
    sites = [f"{path.relative_to(PACKAGE)}:{node.lineno}" for path in sorted(PACKAGE.rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(), str(path)))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("isinstance", "issubclass")
             and "Strategy" in ast.unparse(node.args[1])]
    assert sites == [], sites


def test_the_training_loop_names_no_parallel_library():
    source = (PACKAGE / "training" / "trainer.py").read_text()
    for word in ("torch.distributed", "DistributedDataParallel", "fully_shard", "DTensor", "DeviceMesh",
                 "rank == 0", "fsdp", "ddp"):
        assert word not in source, word
