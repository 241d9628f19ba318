"""Break each promised feature on purpose, in a scratch copy, and check that its test then fails.

A test that passes whatever the code does proves nothing. Each mutation below replaces one piece of
``src/distrain`` with a plausible bug (device_weights ignored, no RNG restore, no autocast, metrics not
reduced across workers, checkpoints written in place, ...), runs the tests that guard that promise
against the mutated copy, and reports whether they failed as they must. The real tree is never touched.

    .venv/bin/python scripts/check_mutations.py             # every mutation
    .venv/bin/python scripts/check_mutations.py rng-restore # one, by name

Each mutation's tests also run on the unmutated copy first (``--baseline``) when asked, to show they pass
there. Last line: ``mutations_caught=CAUGHT/TOTAL``. ``--quick`` runs no test: it applies every mutation to a
copy of ``src/`` and checks that each names test files that exist (a mutation whose code moved is reported),
last line ``mutations_applicable=K/TOTAL``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness import ROOT


@dataclass(frozen=True)
class Mutation:
    name: str
    breaks: str  # the promise broken, in words
    file: str  # under src/distrain
    old: str
    new: str
    tests: tuple[str, ...]  # pytest node ids that must fail
    also: tuple[tuple[str, str], ...] = ()  # further (old, new) replacements in the same file


MUTATIONS = [
    Mutation(
        "device-weights-ignored", "device_weights are ignored: every worker gets an equal share",
        "distributed/config.py",
        "return tuple(self.device_weights) if isinstance(self.device_weights, list) else None",
        "return None",
        ("tests/distributed/test_distributed_equivalence.py::"
         "test_device_weights_set_each_workers_share_of_every_global_batch",),
    ),
    Mutation(
        "rng-restore-dropped", "a resumed worker keeps its fresh random state instead of the checkpoint's",
        "training/random_state.py",
        "def restore(state: dict[str, Any]) -> None:\n",
        "def restore(state: dict[str, Any]) -> None:\n    return\n",
        ("tests/training/test_kill_anywhere.py",  # 2 workers with dropout: each worker's random stream matters
         "tests/training/test_recovery.py::test_kill_9_at_random_step_then_recover_is_bitwise_equal_on_one_worker"),
    ),
    Mutation(
        "autocast-skipped", "trainer.use_amp runs in float32 (autocast never entered)",
        "training/amp.py",
        "        if not self.enabled:\n            return contextlib.nullcontext()",
        "        return contextlib.nullcontext()",
        ("tests/models/test_transformers.py::test_bf16_mixed_precision_trains_on_two_cpu_workers",),
    ),
    Mutation(
        "metrics-per-worker", "metrics and the early-stopping metric are each worker's own, not reduced",
        "metrics/metric.py",
        "        if not syncing() or not is_distributed():\n            return stats",
        "        return stats",
        ("tests/metrics/test_metrics_in_training.py::"
         "test_training_and_validation_metrics_on_two_workers_equal_one_worker",
         "tests/distributed/test_distributed_no_hang.py::"
         "test_early_stopping_on_reduced_metrics_with_uneven_shares_and_an_empty_validation_worker"),
    ),
    Mutation(
        "checkpoints-in-place", "checkpoints are written straight into their final folder (no rename)",
        "training/checkpointing.py",
        "        return Path(tempfile.mkdtemp(dir=self.directory, prefix=f\".tmp-{self.name(epoch, batches)}-\"))",
        "        final = self.directory / self.name(epoch, batches)\n"
        "        shutil.rmtree(final, ignore_errors=True)\n"
        "        final.mkdir()\n"
        "        return final",
        ("tests/training/test_kill_anywhere.py", "tests/training/test_checkpoint_atomicity.py"),
        also=(("                if final.exists():\n                    self._discard(final)\n"
               "                os.replace(temporary, final)\n",
               "                pass  # already in place\n"),),
    ),
    Mutation(
        "gradients-not-scaled-by-world", "each worker's loss is not scaled by the data-parallel size "
        "(DDP's mean then divides the gradient by the world size once too often)",
        "training/trainer.py",
        "scale = self.world.dp_size * batch.size / step_samples",
        "scale = batch.size / step_samples",
        ("tests/runtime/test_distributed_launchers.py::test_torchrun_processes_train_together_and_match_one_process",),
    ),
    Mutation(
        "slurm-nodelist-padding-lost", "SLURM node lists lose their zero padding (node[01-04] -> node1..node4)",
        "runtime/environments/slurm.py",
        "str(number).zfill(width)", "str(number)",
        ("tests/runtime/test_slurm_environment.py::test_node_lists_expand_in_order_keeping_zero_padding",),
    ),
    Mutation(
        "slurm-port-fixed", "every SLURM job meets on the same port instead of one derived from its job id",
        "runtime/environments/slurm.py",
        "return 15000 + job_id % 20000", "return 29500",
        ("tests/runtime/test_slurm_environment.py::test_the_port_is_derived_from_the_job_id",),
    ),
    Mutation(
        "registry-default-ignored", "a block without \"type\" no longer builds the base's default implementation",
        "config/schema.py",
        "type_name = value.pop(\"type\", None) or base.default_implementation",
        "type_name = value.pop(\"type\", None)",
        ("tests/package/test_registry.py::"
         "test_a_block_without_type_builds_the_default_implementation_declared_on_the_base",),
    ),
    Mutation(
        "streaming-readers-read-everything", "every distributed-aware reader reads the whole file, not its share",
        "data/reader.py",
        "mine = position % shard.count == shard.index", "mine = True",
        ("tests/data/test_data_at_scale.py::test_one_epoch_sees_every_record_exactly_once",),
    ),
    Mutation(
        "compile-returns-eager", "trainer.compile hands back the eager model: nothing is compiled",
        "training/parallelize.py",
        "    return torch.compile(module)", "    return module",
        ("tests/training/test_compile.py::test_compiled_model_compiles_and_trains_like_the_eager_one",),
    ),
    Mutation(
        "patience-ignored", "trainer.patience never stops a run: it trains every epoch whatever the metric does",
        "training/metric_tracker.py",
        "return self.patience is not None and self.epochs_without_improvement >= self.patience",
        "return False",
        ("tests/distributed/test_distributed_no_hang.py::"
         "test_early_stopping_on_reduced_metrics_with_uneven_shares_and_an_empty_validation_worker",),
    ),
    Mutation(
        "resume-from-epoch-start", "a run resumed mid-epoch starts that epoch over instead of where it stopped",
        "training/trainer.py",
        "EpochProgress(saved[\"epoch\"], position_in_batches(self.checkpoints.sampler, saved))",
        "EpochProgress(saved[\"epoch\"], 0)",
        ("tests/training/test_recovery.py::test_kill_9_at_random_step_then_recover_is_bitwise_equal_on_one_worker",),
    ),
    Mutation(
        "same-order-every-epoch", "every epoch reads the samples in the first epoch's order",
        "data/sampler.py",
        "rng = np.random.default_rng([self.seed, epoch])", "rng = np.random.default_rng([self.seed, 0])",
        ("tests/data/test_epoch_order.py",),
    ),
]


def scratch_copy(destination: Path) -> Path:
    """The source and tests (what the tests need), without outputs, caches or the virtual environment."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("src", "tests", "configs", "scripts", "pyproject.toml"):
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, destination / part, ignore=ignore)
        else:
            shutil.copy2(source, destination / part)
    return destination


def run_tests(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, float, str]:
    environment = {**os.environ, "PYTHONPATH": f"{copy / 'src'}{os.pathsep}{copy / 'tests' / 'plugins'}"}
    started = time.monotonic()
    try:
        result = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-rf", *tests],
                                cwd=copy, env=environment, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, time.monotonic() - started, "timed out"
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    last = (failures or lines or [result.stderr[-300:]])[-1]
    return result.returncode, time.monotonic() - started, last[:400]


def mutate(copy: Path, mutation: Mutation) -> None:
    path = copy / "src" / "distrain" / mutation.file
    text = path.read_text()
    for old, new in ((mutation.old, mutation.new), *mutation.also):
        if text.count(old) != 1:
            raise SystemExit(f"{mutation.name}: the text to replace is not found exactly once in {mutation.file}")
        text = text.replace(old, new)
    path.write_text(text)


def applicable(chosen: list[Mutation]) -> None:
    """Each mutation applied to a copy of src/ (its text found exactly once), its test files present."""
    ready = 0
    with tempfile.TemporaryDirectory(prefix="mutations-") as scratch:
        shutil.copytree(ROOT / "src", Path(scratch) / "src", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for mutation in chosen:
            missing = [test for test in mutation.tests if not (ROOT / test.split("::")[0]).is_file()]
            try:
                mutate(Path(scratch), mutation)
            except SystemExit as error:
                missing.append(str(error))
            ready += not missing
            print(f"{mutation.name}: {'applies' if not missing else 'STALE: ' + '; '.join(missing)}")
    print(f"mutations_applicable={ready}/{len(chosen)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="mutations to run (default: all)")
    parser.add_argument("--baseline", action="store_true", help="also run each mutation's tests unmutated")
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--quick", action="store_true", help="apply each mutation and check its tests exist, run none")
    args = parser.parse_args()
    chosen = [m for m in MUTATIONS if not args.names or m.name in args.names]
    unknown = set(args.names) - {m.name for m in MUTATIONS}
    if unknown:
        raise SystemExit(f"unknown mutation(s): {', '.join(sorted(unknown))}")
    if args.quick:
        applicable(chosen)
        return
    caught = 0
    for mutation in chosen:
        with tempfile.TemporaryDirectory(prefix=f"mutation-{mutation.name}-") as scratch:
            copy = scratch_copy(Path(scratch))
            if args.baseline:
                status, seconds, last = run_tests(copy, mutation.tests, args.timeout)
                print(f"{mutation.name}: unmutated -> {'pass' if status == 0 else 'FAIL'} ({seconds:.0f} s) {last}")
            mutate(copy, mutation)
            status, seconds, last = run_tests(copy, mutation.tests, args.timeout)
        failed = status != 0
        caught += failed
        print(f"{mutation.name}: {mutation.breaks}\n  -> {'caught' if failed else 'NOT CAUGHT'} "
              f"by {', '.join(mutation.tests)} ({seconds:.0f} s): {last}", flush=True)
    print(f"mutations_caught={caught}/{len(chosen)}")


if __name__ == "__main__":
    main()
