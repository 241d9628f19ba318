"""What every worker runs, assembled from a validated plan: parallelism, loaders, model, its parallel form,
optimizer, scheduler, moving average, checkpoint manager, and the loop they are handed to (AllenNLP's
``TrainModel.from_partial_objects`` with its ``Lazy[Trainer]``); and, before the workers start, the data that
plan reads (:func:`prepare_for_workers`).

:func:`assemble` is shared by training and ``distrain check`` (which assembles rank 0 of N on a
fake process group), so what ``check`` reports is what a real worker builds. It builds from the plan
the parent resolved (:class:`~distrain.experiment.plan.ResolvedExperiment`); nothing is validated again.
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distrain.distributed.config import DistributedConfig, build_parallelism
from distrain.distributed.parallel_model import ParallelModel
from distrain.distributed.strategy import ParallelStrategy
from distrain.distributed.world import World
from distrain.experiment.archive.format import base_reference, write_archive
from distrain.experiment.archive.pretrained_files import pretrained_references
from distrain.data.prepare import PreparedData, prepare_data
from distrain.experiment.plan import Experiment, ResolvedExperiment, Seeds, data_plan_of
from distrain.models.model import Model
from distrain.training.checkpointing import CHECKPOINTS_FOLDER, trained_state
from distrain.training.curves import write_run_curves
from distrain.job import history
from distrain.job.disk import remove_leftovers, write_text_atomically
from distrain.training.state_bytes import held_state_bytes
from distrain.training.summary import print_training_summary
from distrain.training.step_parts import (StepParts, build_model, build_moving_average, build_optimizer,
                                          build_scheduler, checkpoint_manager, mixed_precision, parallel_model,
                                          planned_steps)
from distrain.training.trainer import Trainer

logger = logging.getLogger(__name__)


@dataclass
class Assembly:
    """Everything one worker trains with."""

    experiment: Experiment
    prepared: PreparedData
    model: Model
    #: the configured strategy's options (``ddp``, ``fsdp``, ...)
    strategy: ParallelStrategy
    #: the parallelized model the trainer steps through
    parallel: ParallelModel
    train_loader: Any
    validation_loader: Any | None
    trainer: Trainer

    def effective_batch(self, world: World) -> tuple[int, int, int, int]:
        """(global batch per optimizer step, per worker, data-parallel workers, accumulation steps)."""
        per_worker = self.experiment.data_loader.batch_size
        return per_worker * world.dp_size * self.trainer.accumulation, per_worker, world.dp_size, self.trainer.accumulation


def set_seed(seed: int | Seeds) -> None:
    """Seed Python, numpy and torch (one seed for all three, or AllenNLP's three)."""
    import numpy as np
    import torch

    seeds = seed if isinstance(seed, Seeds) else Seeds(seed, seed, seed)
    random.seed(seeds.python)
    np.random.seed(seeds.numpy % 2**32)
    torch.manual_seed(seeds.torch)


def assemble(
    world: World, resolved: ResolvedExperiment, serialization_dir: str | Path, prepared: PreparedData | None = None
) -> Assembly:
    """Build this worker's run from the plan (reading the data unless ``prepared``), in order: parallelism,
    loaders, model, the parallel model, optimizer, scheduler, moving average, checkpoint manager, and the loop,
    which receives them built."""
    experiment = resolved.build()
    seed = resolved.random_seed
    set_seed(resolved.seeds())
    options = resolved.trainer_options()  # the trainer block's keys for what is built before the loop
    initializer, regularizer = resolved.model_key("initializer"), resolved.model_key("regularizer")
    if prepared is None:
        prepared = prepare_data(data_plan_of(experiment, resolved.config, resolved.distributed), world)
    parallelism = build_parallelism(resolved.distributed or DistributedConfig(cuda_devices=[-1]), world)
    accumulation = None
    if experiment.data_loader.global_batch_size is not None:  # each worker's batch follows from the world
        experiment.data_loader, accumulation = experiment.data_loader.for_world(world.dp_size, world.weights,
                                                                                world.size)
    train_loader = prepared.loader("train", experiment.dataset_reader, experiment.data_loader, world, seed)
    validation_loader = None if prepared.validation is None else prepared.loader(
        "validation", experiment.validation_dataset_reader, experiment.validation_data_loader, world, seed)
    if parallelism.balancer is not None:
        parallelism.balancer.use_loader(train_loader)  # the measured shares split its global batches

    model = build_model(experiment.model, prepared.vocab, parallelism, initializer)
    regularizer = regularizer or getattr(model, "_regularizer", None)  # a user's AllenNLP model may carry its own
    parallel = parallel_model(options, model, parallelism, world)
    optimizer = build_optimizer(options, model)
    scheduler = build_scheduler(options, optimizer, *planned_steps(experiment.trainer, train_loader, accumulation))
    moving_average = build_moving_average(options, model)
    checkpoints = checkpoint_manager(options, Path(serialization_dir), world, model, parallel, optimizer,
                                     train_loader, moving_average)
    parts = StepParts(model, train_loader, validation_loader, parallel, optimizer, scheduler, moving_average,
                      checkpoints, mixed_precision(options, world), regularizer)
    trainer = experiment.trainer.construct(
        parts=parts, serialization_dir=Path(serialization_dir), world=world,
        **({"num_gradient_accumulation_steps": accumulation} if accumulation is not None else {}),
    )
    return Assembly(experiment, prepared, model, parallelism.strategy, parallel, train_loader, validation_loader,
                    trainer)


def prepare_for_workers(resolved: ResolvedExperiment, world: World | None) -> PreparedData:
    """The data of a validated plan, read once before its workers train (:func:`~distrain.data.prepare.prepare_data`
    of ``resolved.data_plan``; ``world``: None in the parent of spawned workers, else this process's), and the
    fields its readers yielded checked against the model's ``forward`` before any step (see
    :func:`~distrain.experiment.field_check.check_read_fields`)."""
    from distrain.experiment.field_check import check_read_fields

    prepared = prepare_data(resolved.data_plan, world)
    check_read_fields(resolved.plan, resolved.data_plan, prepared)
    return prepared


def test_metrics(assembly: Assembly, world: World, seed: int) -> dict[str, Any]:
    """AllenNLP's ``evaluate_on_test``: the trained (best) model on ``test_data_path``, as ``test_<metric>``;
    every worker takes part, each instance counted once."""
    experiment = assembly.experiment
    loader = assembly.prepared.loader("test", experiment.validation_dataset_reader, experiment.validation_data_loader,
                                      world, seed)
    return {f"test_{name}": value for name, value in assembly.trainer.evaluate(loader).items()}


def train_worker(
    world: World,
    prepared: PreparedData | None,
    resolved: ResolvedExperiment,
    serialization_dir: str | Path,
    resume: bool = False,
) -> dict[str, Any]:
    """Assemble and train; with ``resume`` (``--recover``, a restart, a torchrun round that continues its job)
    resume from the latest checkpoint first (if one was written: a run stopped before its first starts over).
    Rank 0 writes the archive, after removing what writers killed mid-write left behind (no other worker
    writes in the folder before training starts)."""
    primary = world.is_primary
    if primary:
        for folder in (Path(serialization_dir), Path(serialization_dir) / CHECKPOINTS_FOLDER):
            remove_leftovers(folder)
    assembly = assemble(world, resolved, serialization_dir, prepared)
    if resume and assembly.trainer.checkpoints.latest() is not None:
        assembly.trainer.resume_from_latest_checkpoint()
    if primary:
        logger.info("effective batch size %d = %d per worker x %d worker(s) x %d accumulation step(s)",
                    *assembly.effective_batch(world))
    metrics = assembly.trainer.train()
    if assembly.experiment.evaluate_on_test and assembly.prepared.test is not None:
        metrics = {**metrics, **test_metrics(assembly, world, resolved.random_seed)}
        if world.is_primary:
            write_text_atomically(Path(serialization_dir) / "metrics.json", json.dumps(metrics, indent=2))
    # what `distrain check --world-size N` predicts for this rank, measured on the real one
    held = held_state_bytes(assembly.model, assembly.trainer.optimizer)
    logger.info("rank %d holds %s after training", world.rank, held.describe())
    weights = assembly.parallel.model_state_dict()  # every rank takes part (sharded or split models gather)
    if world.is_primary:
        from distrain.experiment.archive.format import self_contained_config

        archive = write_archive(Path(serialization_dir), trained_state(assembly.model, weights),
                                assembly.prepared.vocab, self_contained_config(resolved.config, assembly.model),
                                list(pretrained_references(resolved.plan)),
                                adapter_base=base_reference(assembly.model))
        for callback in assembly.trainer.callbacks:
            callback.on_archive(assembly.trainer, archive)
        write_run_curves(Path(serialization_dir))
        history.record(serialization_dir, "finished", step=assembly.trainer.step)
        print_training_summary(assembly.trainer, metrics, archive)
    return metrics
