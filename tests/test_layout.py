"""Promises about where things live: the config is resolved once per run, the checkpoint manager alone
knows the checkpoint formats, nothing reads the trainer's private state, and the docs' architecture path
(docs/concepts/architecture.md, once the README's "How it fits together") names files and functions that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import ROOT, run_cli, text_config, write_config

PACKAGE = ROOT / "src" / "distrain"


def test_training_on_two_workers_resolves_the_config_once(text_data, tmp_path):
    """The resolution_counter plugin (loaded by the parent and by each worker) notes every resolution."""
    config = text_config(text_data, num_epochs=1)
    config["distributed"] = {"cuda_devices": [-1, -1]}
    out, log = tmp_path / "run", tmp_path / "resolutions.txt"
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(out),
                     "--include-package", "resolution_counter", env={"RESOLUTION_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in out.glob("out_worker*.log")) == ["out_worker0.log", "out_worker1.log"]
    assert len(log.read_text().split()) == 1


def test_the_trainer_names_no_checkpoint_format():
    source = (PACKAGE / "training" / "trainer.py").read_text()
    for word in ("torch.distributed.checkpoint", "dcp", "sharded", '"full"', "safetensors", "Checkpointer"):
        assert word not in source, word


def private_trainer_reads(path: Path) -> list[str]:
    """``trainer._x`` / ``self.trainer._x`` reads in ``path`` (dunder names aside)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
            if name == "trainer":
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_private_read_finder_sees_one(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f(trainer, self):\n    return trainer._started, self.trainer._open_bar, trainer.step\n")
    assert private_trainer_reads(probe) == ["probe.py:2: trainer._started", "probe.py:2: self.trainer._open_bar"]


def test_no_module_reads_the_trainers_private_state():
    paths = [path for folder in (PACKAGE, ROOT / "tests" / "plugins") for path in folder.rglob("*.py")]
    found = [read for path in paths if path.name != "trainer.py" for read in private_trainer_reads(path)]
    assert not found, found


def how_it_fits_together() -> str:
    page = (ROOT / "docs" / "concepts" / "architecture.md").read_text()
    return page.split("# How it fits together", 1)[1]


def defines(path: Path, name: str) -> bool:
    """Whether ``path`` defines ``name`` (a function, a class, or ``Class.method``)."""
    tree = ast.parse(path.read_text())
    owner, _, member = name.rpartition(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and owner and node.name == owner:
            return any(getattr(child, "name", None) == member for child in node.body)
        if not owner and isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
    return False


def test_how_it_fits_together_names_files_and_functions_that_exist():
    section = how_it_fits_together()
    steps = re.findall(r"^\d+\. `([\w/]+\.py)` `([\w.]+)`", section, re.M)
    assert len(steps) >= 7, "the numbered path from `distrain train` to the loop's step"
    for file, name in steps:
        assert (PACKAGE / file).is_file(), file
        assert defines(PACKAGE / file, name), f"{file} does not define {name}"
    mentioned = set(re.findall(r"`([\w/]+\.py)`", section))
    missing = [file for file in mentioned if not (PACKAGE / file).is_file() and not (ROOT / file).is_file()]
    assert not missing, missing
    # the path enters each file once
    assert len({file for file, _ in steps}) == len(steps)


def test_a_finished_trainer_is_freed_without_the_cycle_collector(text_data, tmp_path):
    """Nothing the trainer owns (the checkpoint manager above all) refers back to it: a worker's model,
    optimizer and parallel wrappers go when its work returns, before the process group is destroyed.
    (A cycle kept them until interpreter exit, where a DDP reducer's teardown aborted spawned workers.)"""
    import gc
    import weakref

    from distrain.distributed.world import SINGLE
    from distrain.experiment.assemble import assemble
    from distrain.experiment.plan import resolve_experiment
    from distrain.plugins import import_plugins

    import_plugins([])
    assembly = assemble(SINGLE, resolve_experiment(text_config(text_data, num_epochs=1)), tmp_path / "run")
    gc.disable()
    try:
        assembly.trainer.train()
        trainer, model = weakref.ref(assembly.trainer), weakref.ref(assembly.model)
        del assembly
        assert trainer() is None and model() is None
    finally:
        gc.enable()
