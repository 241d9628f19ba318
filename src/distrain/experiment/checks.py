"""Config-time checks of module-name patterns (shard units, activation checkpointing), of
activation offloading and of the readers' sequence length against the model's context, made before
any data is read.

Patterns name modules, so checking them needs the model's structure, not its data: the model is
built on the meta device (no memory, no initialisation) with a stand-in vocabulary that has two
entries in every namespace. Module names do not depend on vocabulary sizes; a model that cannot be
built this way is checked when the real one is built instead (the same error, found later).
"""

from __future__ import annotations

import logging
from typing import Any

from distrain.config.errors import Problem
from distrain.data.vocabulary import Vocabulary
from distrain.modules.adapter import AdapterError

logger = logging.getLogger(__name__)


class _StandInVocabulary(Vocabulary):
    def size(self, namespace: str = "tokens") -> int:
        return 2

    def tokens(self, namespace: str = "tokens") -> list[str]:
        return ["@@PADDING@@", "@@UNKNOWN@@"]


def module_problems(plan: Any) -> list[Problem]:
    """Problems of the experiment ``plan`` (a resolved :class:`~distrain.experiment.plan.Experiment`)."""
    trainer = plan.arguments["trainer"]
    distributed_node = plan.arguments.get("distributed")
    distributed = distributed_node.build() if distributed_node is not None else None
    problems: list[Problem] = []
    if _argument(trainer, "activation_offloading"):
        from distrain.training.activations import offloading_problems

        problems += offloading_problems("cuda" if distributed is not None and distributed.uses_cuda else "cpu")
    if _argument(trainer, "param_dtype") not in (None, "float32") and distributed is not None:
        from distrain.training.amp import precision_problems

        problems += precision_problems({"param_dtype": _argument(trainer, "param_dtype")},
                                       distributed.strategy_class().casts_parameters,
                                       distributed.pipeline_parallel_size > 1)
    checks = []
    adapter = _argument(plan.arguments["model"], "adapter") if hasattr(plan.arguments["model"], "arguments") else None
    if adapter is not None:  # its target modules are checked when the model is built (below)
        checks.append(lambda model: [])
        if distributed is not None and distributed.tensor_parallel_size > 1:
            problems.append(Problem("model.adapter", "adapters cannot be split by tensor parallelism (peft's layers "
                                                     "are not DTensor-aware); use fsdp or ddp"))
    checkpointing = _argument(trainer, "activation_checkpointing")
    if checkpointing is not None:
        checks.append(lambda model: _checkpointing_problems(model, checkpointing.modules))
    unit_problems = distributed.strategy_class().unit_problems if distributed is not None else None
    if unit_problems is not None:
        arguments = distributed.strategy.arguments if distributed.strategy is not None else {}
        checks.append(lambda model: unit_problems(arguments, model, "distributed.strategy"))
    if distributed is not None and distributed.tensor_parallel_size > 1 and adapter is None:
        from distrain.distributed.tensor_parallel import plan_problems

        checks.append(lambda model: plan_problems(model, distributed.tensor_parallel_size,
                                                  distributed.tensor_plan_override()))
    if distributed is not None and distributed.pipeline_parallel_size > 1:
        from distrain.distributed.pipeline import pipeline_problems

        split_points = distributed.pipeline.split_points if distributed.pipeline is not None else None
        checks.append(lambda model: pipeline_problems(model, distributed.pipeline_parallel_size, split_points))
        problems += _microbatch_problems(plan, distributed.microbatches())
    problems += _global_batch_problems(plan, distributed)
    lengths = _sequence_lengths(plan)
    if lengths:
        checks.append(lambda model: _context_problems(model, lengths))
    if not checks:
        return problems
    try:
        model = _meta_model(plan.arguments["model"])
    except AdapterError as error:
        return problems + list(error.problems)
    if model is None:
        return problems
    for check in checks:
        problems += check(model)
    return problems


def _microbatch_problems(plan: Any, microbatches: int) -> list[Problem]:
    """Each data-parallel rank's batch must cut into equal micro-batches (a smaller last batch of an
    epoch runs as fewer of them, see :mod:`distrain.distributed.pipeline`)."""
    loader = plan.arguments.get("data_loader")
    batch = _argument(loader, "batch_size") if loader is not None and hasattr(loader, "arguments") else None
    sampler = loader.arguments.get("batch_sampler") if loader is not None and hasattr(loader, "arguments") else None
    if sampler is not None and hasattr(sampler, "arguments") and "batch_size" in sampler.arguments:
        batch = sampler.argument("batch_size")  # the batch sampler's batch size is the per-rank one
    if isinstance(batch, int) and batch % microbatches:
        return [Problem("data_loader.batch_size", f"{batch} samples per data-parallel rank do not divide into "
                        f"distributed.pipeline.microbatches ({microbatches}) equal micro-batches")]
    return []


def _global_batch_problems(plan: Any, distributed: Any) -> list[Problem]:
    """``data_loader.global_batch_size`` must cut into whole samples per worker on this world, and it
    decides the accumulation steps itself."""
    from distrain.distributed.global_batch import GlobalBatchError, split_global_batch

    loader = plan.arguments.get("data_loader")
    size = _argument(loader, "global_batch_size") if loader is not None and hasattr(loader, "arguments") else None
    if size is None:
        return []
    problems = []
    if _argument(plan.arguments["trainer"], "num_gradient_accumulation_steps") not in (None, 1):
        problems.append(Problem("trainer.num_gradient_accumulation_steps", "cannot be given with "
                                "data_loader.global_batch_size, which decides the accumulation steps"))
    world_size = distributed.world_size if distributed is not None else 1
    workers = distributed.dims(world_size).dp_size if distributed is not None else 1
    shares = distributed.fixed_weights() if distributed is not None else None
    try:
        split_global_batch(size, workers, shares, _argument(loader, "max_micro_batch_size"), world_size)
    except GlobalBatchError as error:
        problems.append(Problem("data_loader.global_batch_size", str(error)))
    return problems


def _sequence_lengths(plan: Any) -> dict[str, int]:
    """The readers' ``sequence_length`` (for readers that have one), by key path."""
    found = {}
    for key in ("dataset_reader", "validation_dataset_reader"):
        node = plan.arguments.get(key)
        if node is not None and hasattr(node, "arguments") and isinstance(_argument(node, "sequence_length"), int):
            found[f"{key}.sequence_length"] = _argument(node, "sequence_length")
    return found


def _context_problems(model: Any, lengths: dict[str, int]) -> list[Problem]:
    """Sequences longer than the model's context (its position embeddings) would fail, or silently
    run past what the model was built for."""
    declared = getattr(model, "context_length", None)
    context = declared() if callable(declared) else None
    if context is None:
        return []
    return [Problem(path, f"{length} tokens is longer than the model's context ({context} positions)")
            for path, length in lengths.items() if length > context]


def _argument(node: Any, name: str) -> Any:
    """A trainer argument's configured (else default) value; None for a trainer without it."""
    import inspect

    if name not in node.arguments and name not in inspect.signature(node.cls).parameters:
        return None
    return node.argument(name)


def _checkpointing_problems(model: Any, patterns: list[str]) -> list[Problem]:
    from distrain.config.errors import ConfigError
    from distrain.training.activations import checkpointed_modules

    try:
        checkpointed_modules(model, patterns, "trainer.activation_checkpointing.modules")
    except ConfigError as error:
        return list(error.problems)
    return []


def _meta_model(node: Any) -> Any:
    """The model on the meta device, built from its pretrained configs (no weights read); an adapter that
    does not fit it raises :class:`AdapterError`."""
    import torch

    from distrain.pretrained import weights_elsewhere

    try:
        with torch.device("meta"), weights_elsewhere():
            return node.construct(vocab=_StandInVocabulary())
    except AdapterError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure: the real build checks the patterns later
        logger.debug("module patterns not checked before reading data (%s)", error)
        return None
