"""One-process reference runs shared by the sharding and model-parallel tests (trained once per test run):
the tiny BERT MLM and the tiny transformer classifier of ``test_fsdp.py``, on one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import built_once, run_cli, write_config


@pytest.fixture(scope="session")
def one_process_references(tmp_path_factory) -> dict[str, Path]:
    """``{"mlm_one": DIR, "classifier_one": DIR, "references_root": ROOT}``; the MLM reference checkpoints
    after every batch, so the resume tests can also start from it (with ``ROOT/mlm_base.json``, its config
    on this folder's copy of the data). Trained once for the whole test run, whichever process asks first."""
    return built_once(tmp_path_factory, "references", _train_references)


def _train_references(root: Path) -> dict[str, Path]:
    import json

    from test_fsdp import PLUGIN, classifier_config, mlm_config, variant

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
