"""The contributor guide's "add a task" walk-through, run as written on a copy of the package: a new
``zoo/<task>/`` folder with a reader, a model and a metric, found by the registry's walk and trained from a config,
with no file outside the folder touched."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys

from support.docs import DOCS, ROOT, code_blocks, tutorial_environment

GUIDE = DOCS / "concepts" / "contributing.md"
TASK = "src/distrain/zoo/question_detection/"


def source_files(src):
    return {str(path.relative_to(src)) for path in src.rglob("*") if path.is_file() and "__pycache__" not in path.parts}


def test_the_add_a_task_walk_through_trains_a_new_task_folder_touching_nothing_outside_it(tmp_path):
    shutil.copytree(ROOT / "src" / "distrain", tmp_path / "src" / "distrain",
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = source_files(tmp_path / "src")
    environment = {**tutorial_environment(tmp_path), "PYTHONPATH": str(tmp_path / "src")}
    (tmp_path / "bin").mkdir()
    for name, tail in (("python", ""), ("distrain", "-m distrain")):
        wrapper = tmp_path / "bin" / name
        wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {tail} \"$@\"\n")
        wrapper.chmod(0o755)
    environment["PATH"] = f"{tmp_path / 'bin'}:{environment['PATH']}"

    outputs, sources = [], []
    for block in code_blocks(GUIDE):
        if block.title:
            assert block.title.startswith(TASK) or "/" not in block.title, f"{block.name} writes {block.title}"
            sources += [block.title] if block.title.startswith(TASK) else []
            (tmp_path / block.title).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / block.title).write_text(block.text)
        elif block.language == "bash":
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=tmp_path, env=environment,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"{block.name}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
            outputs.append(done.stdout)

    kinds = {path.split("/")[4] for path in sources if path.count("/") > 4}
    assert kinds == {"readers", "models", "metrics"}, kinds
    added = source_files(tmp_path / "src") - before
    assert added == {path.removeprefix("src/") for path in sources}
    assert "question_detector" in outputs[-1]
    metrics = json.loads((tmp_path / "runs" / "questions" / "metrics.json").read_text())
    # the templates tell a question by its first word and its "?": learnt in 3 epochs, unlike a constant answer (0.5)
    assert 0.9 < metrics["best_validation_balanced_accuracy"] <= 1.0
    assert f"{metrics['best_validation_balanced_accuracy']}" in outputs[-1]
