"""One-process reference runs shared by the sharding and model-parallel tests (trained once per test run, by the
fixture ``one_process_references`` in conftest.py): the tiny BERT MLM and the tiny transformer classifier of
``test_fsdp.py``, on one process."""

from __future__ import annotations

from pathlib import Path

from support.cli import run_cli
from support.configs import write_config


def train_references(root: Path) -> dict[str, Path]:
    import json

    from distributed.test_fsdp import PLUGIN, classifier_config, mlm_config, variant

    bases = {"mlm": mlm_config(root / "mlm"), "classifier": classifier_config(root / "classifier")}
    (root / "mlm_base.json").write_text(json.dumps(bases["mlm"]))
    runs = {"references_root": root}
    for model in bases:
        name = f"{model}_one"
        out = root / name
        result = run_cli("train", str(write_config(root / f"{name}.json", variant(bases[model]))), "-s", str(out),
                         *PLUGIN, timeout=300)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        runs[name] = out
    return runs
