"""``distrain check CONFIG``: validate, read the data, and assemble rank 0's worker without training.

With a ``distributed`` block, rank 0 of the configured world is assembled on a fake process group
(no other process runs), so the strategy, loaders and effective batch are those of the real job.
``--world-size N [--nodes M]`` is a dry run at any scale (see :mod:`distrain.experiment.dry_run`): the mesh,
every rank's share of the global batch, steps per epoch and per-rank state bytes of an N-process job.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from distrain.commands.arguments import add_config_arguments, load_experiment_from_args

if TYPE_CHECKING:
    import torch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_config_arguments(parser)
    parser.add_argument("--world-size", type=int, default=None, metavar="N",
                        help="dry run as a job of N processes (default: the config's own)")
    parser.add_argument("--nodes", type=int, default=1, metavar="M", help="spread the N processes over M nodes")


def run(args: argparse.Namespace) -> int:
    import tempfile

    from distrain.experiment.assemble import assemble, prepare_for_workers
    from distrain.experiment.dry_run import dry_run_world, human_bytes, state_bytes

    if args.world_size is not None:  # validated at that size, not at the configured one
        return run_dry(args)
    from distrain.commands.train import refuse_missing_gpus

    _config, resolved = load_experiment_from_args(args)
    refuse_missing_gpus(resolved)
    data = resolved.data_plan
    prepared = prepare_for_workers(resolved, None)  # and what the readers yielded, checked
    with tempfile.TemporaryDirectory() as scratch, dry_run_world(resolved.distributed) as world:
        assembly = assemble(world, resolved, scratch, prepared)
        state = state_bytes(assembly.model, assembly.trainer.optimizer)  # while the process group lives
    model, trainer = assembly.model, assembly.trainer
    batch, per_worker, workers, accumulation = assembly.effective_batch(world)
    distributed = resolved.distributed
    print(f"config OK: {args.config}")
    print(f"  dataset_reader   {type(data.train.reader).__name__}")
    print(f"  training data    {len(prepared.train)} instances from {data.train.path}")
    if prepared.validation is not None:
        print(f"  validation data  {len(prepared.validation)} instances from {data.validation.path}")
    if prepared.test is not None:
        print(f"  test data        {len(prepared.test)} instances from {data.test.path}")
    print(f"  vocabulary       {prepared.vocab}")
    print(model_line(model))
    print(f"  trainer          {type(trainer).__name__}, optimizer {type(trainer.optimizer).__name__}")
    print(f"  strategy         {type(assembly.strategy).__name__}")
    print(f"  device mesh      {distributed.dims(world.size).describe() if distributed else '1 process'}")
    for line in assembly.parallel.described:
        print(f"  {line}")
    print(f"  rank 0 holds     parameters {human_bytes(state.parameters)}, gradients {human_bytes(state.gradients)}, "
          f"optimizer state {human_bytes(state.optimizer)}")
    print(f"  workers          {world.size}" + (f" (devices {distributed.cuda_devices})" if distributed else ""))
    print(f"  effective batch  {batch} = {per_worker} per worker x {workers} worker(s) x {accumulation} accumulation")
    print(f"  steps per epoch  {trainer.steps_per_epoch}")
    return 0


def run_dry(args: argparse.Namespace) -> int:
    from distrain.commands.arguments import load_config_from_args
    from distrain.experiment.dry_run import dry_run, render
    from distrain.plugins import import_plugins

    config = load_config_from_args(args)
    import_plugins(args.include_package)
    figures, assembly = dry_run(config, args.world_size, args.nodes)
    print(f"config OK at {args.world_size} process(es): {args.config}")
    print(model_line(assembly.model))
    print(f"  optimizer        {type(assembly.trainer.optimizer).__name__}")
    print(render(figures))
    return 0


def model_line(model: torch.nn.Module) -> str:
    """The report's line on the model: its class and its parameters, all and trainable."""
    parameters = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return f"  model            {type(model).__name__}: {parameters:,} parameters ({trainable:,} trainable)"
