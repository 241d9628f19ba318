"""What the loop steps through, built before the loop: the trainer block's keys for it (:class:`AssemblyOptions`),
one function per part, and the parts themselves (:class:`StepParts`).

:func:`~distrain.experiment.assemble.assemble` calls the functions in order (model, parallel model, optimizer,
scheduler, moving average, checkpoint manager) and hands the trainer the parts built, as AllenNLP's
``TrainModel.from_partial_objects`` hands its trainer a built model and loaders; the trainer builds nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import torch

from distrain.config.constraints import NonNegativeFloat, NonNegativeInt, PositiveInt
from distrain.config.errors import ConfigError, Problem
from distrain.config.lazy import Lazy
from distrain.data.loader import DataLoader
from distrain.distributed.parallel_model import ParallelModel
from distrain.distributed.strategy import Parallelism
from distrain.distributed.world import World
from distrain.models.model import Model
from distrain.optim.optimizers import Optimizer
from distrain.optim.schedulers import LearningRateScheduler
from distrain.training.activations import ActivationCheckpointing
from distrain.training.amp import AmpDtype, MixedPrecision, ParamDtype, precision_problems, warn_if_emulated
from distrain.training.checkpoint_manager import DEFAULT_FORMAT, CheckpointFormat, CheckpointManager
from distrain.training.checkpointing import CHECKPOINTS_FOLDER
from distrain.training.moving_average import MovingAverage
from distrain.training.parallelize import parallelize


@dataclass
class AssemblyOptions:
    """The trainer block's keys that assemble reads rather than the trainer: how the parts are built (the
    optimizer, by default Adam; the schedule and the moving average, by default none; precision, compile and
    activation checkpointing, applied by ``parallelize``; the checkpoints' format and cadence) and the run's
    ``random_seed``. They are keys of every trainer's block, validated with the rest (the trainer's
    ``assembly_options``; see :mod:`distrain.config.schema`)."""

    optimizer: Lazy[Optimizer] | None = None
    learning_rate_scheduler: Lazy[LearningRateScheduler] | None = None
    moving_average: Lazy[MovingAverage] | None = None
    random_seed: NonNegativeInt = 13
    use_amp: bool = False
    amp_dtype: AmpDtype = "bfloat16"
    param_dtype: ParamDtype = "float32"
    compile: bool = False
    activation_checkpointing: ActivationCheckpointing | None = None
    checkpoint_format: CheckpointFormat = DEFAULT_FORMAT
    keep_checkpoints: NonNegativeInt = 2
    save_every_num_batches: PositiveInt | None = None
    save_every_num_seconds: NonNegativeFloat | None = None

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Settings that cannot go together, whatever the layout (paths relative to the trainer)."""
        problems = precision_problems(arguments, path="param_dtype")
        if arguments.get("moving_average") is not None and arguments.get("checkpoint_format") == "sharded":
            problems.append(Problem("moving_average", "needs checkpoint_format full: a sharded checkpoint "
                                                      "marks the trained weights best, not the averaged ones"))
        return problems


@dataclass
class StepParts:
    """What the trainer steps through and saves: the model and the loaders, then what assemble builds in order."""

    model: Model
    train_loader: DataLoader
    validation_loader: DataLoader | None
    #: the handle the step synchronises, clips and saves through; ``parallel.module`` runs forward
    parallel: ParallelModel
    optimizer: Optimizer
    scheduler: LearningRateScheduler | None
    #: validation, the best weights and the final model use its averages (see :mod:`.moving_average`)
    moving_average: MovingAverage | None
    checkpoints: CheckpointManager
    amp: MixedPrecision
    #: AllenNLP's ``model.regularizer`` (see :mod:`distrain.optim.regularizers`), its gradient added each step
    regularizer: Any = None


def build_model(recipe: Lazy[Model], vocab: Any, parallelism: Parallelism, initializer: Any = None) -> Model:
    """The model from its recipe, where the strategy builds it (FSDP: on the meta device, then only its shards),
    AllenNLP's ``model.initializer`` applied."""
    with parallelism.strategy.model_init_context(parallelism.dims):
        model = recipe.construct(vocab=vocab)
        if initializer is not None:
            initializer.apply(model)
    return model


def parallel_model(options: AssemblyOptions, model: Model, parallelism: Parallelism, world: World) -> ParallelModel:
    """The model under the run's parallelisms (:func:`~distrain.training.parallelize.parallelize`), once the
    precision settings are known to suit the strategy and the layout."""
    if problems := precision_problems({"use_amp": options.use_amp, "param_dtype": options.param_dtype},
                                      parallelism.strategy.casts_parameters, parallelism.dims.pp > 1):
        raise ConfigError(problems)
    if world.is_primary:
        warn_if_emulated(options.use_amp, options.amp_dtype, options.param_dtype, torch.device(world.device))
    return parallelize(model, parallelism, options.activation_checkpointing, options.compile, options.param_dtype)


def build_optimizer(options: AssemblyOptions, model: Model) -> Optimizer:
    """Over the parameters as parallelized (FSDP's shards, a split model's own stage)."""
    chosen = options.optimizer or Lazy(lambda model_parameters: Optimizer.by_name("adam")(model_parameters), "adam")
    return chosen.construct(model_parameters=list(model.named_parameters()))


def steps_per_epoch(train_loader: Any, accumulation: int) -> int:
    """Optimizer steps in one epoch: its global batches, ``accumulation`` to a step (a short last step counts)."""
    return math.ceil(len(train_loader) / accumulation)


def planned_steps(trainer: Lazy, train_loader: Any, accumulation: int | None) -> tuple[int, int]:
    """(epochs, optimizer steps per epoch) the trainer block plans: what a schedule is built for. ``accumulation``
    given (a ``global_batch_size`` decides it) wins over the block's ``num_gradient_accumulation_steps``."""
    accumulation = accumulation or trainer.argument("num_gradient_accumulation_steps", 1)
    return trainer.argument("num_epochs"), steps_per_epoch(train_loader, accumulation)


def build_scheduler(options: AssemblyOptions, optimizer: Optimizer, epochs: int,
                    per_epoch: int) -> LearningRateScheduler | None:
    """Over the whole run; a schedule defined per epoch (AllenNLP's ``slanted_triangular``) is also told its shape."""
    recipe = options.learning_rate_scheduler
    if recipe is None:
        return None
    shape = {"trainer_epochs": epochs, "trainer_steps_per_epoch": per_epoch}
    return recipe.construct(optimizer=optimizer, num_training_steps=epochs * per_epoch,
                            **(shape if getattr(recipe.cls, "wants_epoch_shape", False) else {}))


def build_moving_average(options: AssemblyOptions, model: Model) -> MovingAverage | None:
    recipe = options.moving_average
    return recipe.construct(parameters=list(model.named_parameters())) if recipe is not None else None


def checkpoint_manager(options: AssemblyOptions, serialization_dir: Path, world: World, model: Model,
                       parallel: ParallelModel, optimizer: Optimizer, train_loader: Any,
                       moving_average: MovingAverage | None) -> CheckpointManager:
    """The run's checkpoints, under ``serialization_dir`` (made by the primary worker if missing)."""
    if world.is_primary:
        serialization_dir.mkdir(parents=True, exist_ok=True)
    return CheckpointManager(
        serialization_dir / CHECKPOINTS_FOLDER, world, parallel, model, optimizer,
        sampler=getattr(train_loader, "sampler", None), checkpoint_format=options.checkpoint_format,
        keep=options.keep_checkpoints, every_num_batches=options.save_every_num_batches,
        every_num_seconds=options.save_every_num_seconds,
        averaged=moving_average.averaged if moving_average is not None else None,
    )


def mixed_precision(options: AssemblyOptions, world: World) -> MixedPrecision:
    """``use_amp``'s autocast and loss scaling on this worker's device."""
    return MixedPrecision(options.use_amp, options.amp_dtype, torch.device(world.device))
