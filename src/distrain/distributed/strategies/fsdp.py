"""Shard parameters, gradients and optimizer state over the data-parallel ranks (PyTorch FSDP2).

Each shard unit (a module named by the model's :meth:`~distrain.models.model.Model.shard_units`
patterns, or by ``units`` in the config) is wrapped with ``fully_shard``, deepest first, and the root
last, on an explicit device mesh built from the parallel degrees: ``dp_shard`` ranks hold one shard
each; with ``shard_group_size`` smaller than the job, groups of that many ranks shard and the groups
replicate (hybrid sharding, a 2-D mesh ``dp_replicate x dp_shard``). Gradients are averaged over all
data-parallel ranks, as under DDP, so the trainer's loss scaling gives the one-process update.

State dicts go through ``torch.distributed.checkpoint.state_dict``: the full model and optimizer
state (keyed by parameter names, so it loads under any strategy) is gathered to rank 0 on the host,
and a full state is sliced into this rank's shards on load.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from functools import partial
from typing import Any, Iterable, Iterator, Literal

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.errors import ConfigError, Problem
from distrain.distributed.applied import Applied
from distrain.distributed.model_state import GATHERED
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.strategy import Parallelism, ParallelStrategy
from distrain.distributed.world import SINGLE, World

logger = logging.getLogger(__name__)

DType = Literal["float32", "bfloat16", "float16"]


@dataclass
class MixedPrecisionConfig:
    """``param_dtype``: parameters are gathered (and forward/backward run) in it; ``reduce_dtype``:
    gradients are reduced in it. Sharded parameters and the optimizer stay float32."""

    param_dtype: DType | None = None
    reduce_dtype: DType | None = None

    def policy(self):
        from torch.distributed.fsdp import MixedPrecisionPolicy

        def dtype(name: str | None):
            return getattr(torch, name) if name else None

        return MixedPrecisionPolicy(param_dtype=dtype(self.param_dtype), reduce_dtype=dtype(self.reduce_dtype))


@ParallelStrategy.register("fsdp")
class FullyShardedDataParallelStrategy(ParallelStrategy):
    """``reshard_after_forward``: free gathered parameters after forward (gather again for backward:
    less memory, more communication). ``shard_group_size``: shard within groups of this many
    data-parallel ranks and replicate across groups (default: the whole job is one group).
    ``cpu_offload``: sharded parameters, gradients and optimizer state live in host memory (CUDA
    only). ``units``: module-name patterns to shard as units, instead of the model's own.
    ``delayed_init``: ranks other than 0 build the model on the meta device and receive only their
    shards of rank 0's initial (or pretrained) weights, so no other rank ever holds the whole model."""

    forward_is_collective = True
    pipelines = False
    casts_parameters = True
    mesh_dims = ("dp_shard",)  # a multi-process job always shards, over a mesh (groups of one rank included)

    def __init__(
        self,
        world: World = SINGLE,
        reshard_after_forward: bool = True,
        shard_group_size: PositiveInt | None = None,
        mixed_precision: MixedPrecisionConfig | None = None,
        cpu_offload: bool = False,
        units: list[str] | None = None,
        delayed_init: bool = True,
    ) -> None:
        super().__init__(world)
        self.reshard_after_forward = reshard_after_forward
        self.shard_group_size = shard_group_size
        self.mixed_precision = mixed_precision
        self.cpu_offload = cpu_offload
        self.units = units
        self.delayed_init = delayed_init

    # ----------------------------------------------------------------------- config-time checks
    @classmethod
    def dims(cls, world_size: int, arguments: dict[str, Any]) -> ParallelDims:
        shard = arguments.get("shard_group_size") or world_size
        if shard > world_size or world_size % shard:
            shard = world_size  # reported by problems() with its key path
        return ParallelDims.data_parallel(world_size, shard)

    @classmethod
    def problems(cls, arguments: dict[str, Any], world_size: int, path: str, uses_cuda: bool = False) -> list[Problem]:
        found = []
        shard = arguments.get("shard_group_size")
        if shard is not None and (shard > world_size or world_size % shard):
            found.append(Problem(f"{path}.shard_group_size", f"must divide the {world_size} data-parallel "
                                 f"rank(s) (groups of {shard} ranks shard, the groups replicate), got {shard}"))
        if arguments.get("cpu_offload") and world_size == 1:
            found.append(Problem(f"{path}.cpu_offload", "offloads sharded state; one process has nothing to shard "
                                 "over (use 2 or more processes, or leave it out)"))
        elif arguments.get("cpu_offload") and not uses_cuda:
            found.append(Problem(f"{path}.cpu_offload", "offloads from CUDA devices to the host; this job runs on "
                                 "the CPU only (cuda_devices -1), so there is nothing to offload"))
        if arguments.get("mixed_precision") and world_size == 1:
            found.append(Problem(f"{path}.mixed_precision", "casts sharded parameters; one process has nothing to "
                                 "shard over and would train in full precision (use trainer.use_amp on one process)"))
        return found

    @classmethod
    def unit_problems(cls, arguments: dict[str, Any], model: torch.nn.Module, path: str) -> list[Problem]:
        """A unit pattern (configured ``units``, else the model's ``shard_units``) that matches no module."""
        from distrain.modules.selection import select_modules

        configured = arguments.get("units")
        patterns = configured if configured is not None else _declared_units(model)
        where = f"{path}.units" if configured is not None else f"model (its shard_units, for {path})"
        return [Problem(where, f"pattern {pattern!r} matches no module of the model")
                for pattern, names in select_modules(model, patterns).items() if not names]

    def unit_names(self, model: torch.nn.Module) -> list[str]:
        """The modules sharded as units (the root aside), deepest first; a pattern that matches
        nothing is a config error naming it."""
        from distrain.modules.selection import deepest_first, select_modules

        problems = self.unit_problems({"units": self.units}, model, "distributed.strategy")
        if problems:
            raise ConfigError(problems)
        patterns = self.units if self.units is not None else _declared_units(model)
        return deepest_first(name for names in select_modules(model, patterns).values() for name in names)

    def delays_init(self, splits_layers: bool) -> bool:
        """Delayed initialisation applies to real multi-process runs (not to a meta-device dry run); under
        tensor parallelism (``splits_layers``) every rank builds the whole model, then keeps its parts."""
        return self.delayed_init and self.world.is_distributed and self.world.device != "meta" and not splits_layers

    def model_init_context(self, dims: ParallelDims | None = None) -> contextlib.AbstractContextManager:
        """Sets glibc's mmap threshold (gathered and freed layers go back to the OS, see host_memory); with
        delayed initialisation, ranks other than 0 build the model's parameters on the meta device."""
        if self.world.is_distributed and self.world.device != "meta":
            from distrain.compat.host_memory import fix_mmap_threshold

            fix_mmap_threshold()
        if self.delays_init(dims is not None and dims.tp > 1) and not self.world.is_primary:
            return parameters_on_meta()
        return contextlib.nullcontext()

    def apply(self, model: torch.nn.Module, mesh: Any, parallelism: Parallelism) -> Applied:
        return apply_fsdp(model, mesh, self, parallelism.world)


def apply_fsdp(model: torch.nn.Module, mesh: Any, options: FullyShardedDataParallelStrategy,
               world: World) -> Applied:
    """Shard ``model`` (in place) over the data-parallel dimensions of the job's ``mesh``: ``fully_shard`` on
    each unit, deepest first, then the root; ranks built on the meta device then receive their shards of
    rank 0's initial weights. Its state is gathered to save it, its gradients clipped by the norm over every
    rank's shards. One process (no mesh): nothing to shard over, the model runs as it is."""
    names = options.unit_names(model)
    if mesh is None:
        return Applied(model)
    delayed = options.delays_init("tp" in mesh.mesh_dim_names)
    initial = model.state_dict() if delayed and world.is_primary else {}
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

    mesh = data_parallel_mesh(mesh)
    settings: dict[str, Any] = {"mesh": mesh, "reshard_after_forward": options.reshard_after_forward}
    settings["mp_policy"] = options.mixed_precision.policy() if options.mixed_precision else MixedPrecisionPolicy()
    if options.cpu_offload:
        settings["offload_policy"] = CPUOffloadPolicy(pin_memory=True)
    lookups = {name for name in names if _only_looks_up(model.get_submodule(name), model)}
    reduce_scatter = _reduce_scatter_for(torch.device(world.device))
    for name in names:
        unit = fully_shard(model.get_submodule(name), **settings)
        if name in lookups:
            unit.set_unshard_in_backward(False)  # an embedding's gradient needs its indices, not its weight
        if reduce_scatter is not None:
            unit.set_custom_reduce_scatter(reduce_scatter)
    root = fully_shard(model, **settings)
    if reduce_scatter is not None:
        root.set_custom_reduce_scatter(reduce_scatter)
    if delayed:
        _materialise(model, initial, world)
    if world.is_primary:
        logger.info("fsdp: %d shard unit(s) and the root on mesh %s", len(names), describe_mesh(mesh))
    return Applied(model, holding=GATHERED, no_sync=partial(gradient_sync_deferred, model),
                   clip_grad_norm=clip_sharded_grad_norm)


@contextlib.contextmanager
def gradient_sync_deferred(model: torch.nn.Module) -> Iterator[None]:
    """Backward inside keeps unreduced gradients (an accumulation micro-step); the step's last reduces them."""
    model.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        model.set_requires_gradient_sync(True)


def data_parallel_mesh(mesh: Any) -> Any:
    """The data-parallel dimensions of the job's mesh, by name: 1-D ``dp_shard``, or 2-D ``dp_replicate x
    dp_shard`` (hybrid: groups shard, the groups replicate)."""
    names = tuple(name for name in ("dp_replicate", "dp_shard") if name in mesh.mesh_dim_names)
    return mesh if names == tuple(mesh.mesh_dim_names) else mesh[names]


def describe_mesh(mesh: Any) -> str:
    names = mesh.mesh_dim_names or ()
    return " x ".join(f"{n} {s}" for n, s in zip(names, mesh.shape)) + f" {mesh.mesh.tolist()}"


def _materialise(model: torch.nn.Module, initial: dict[str, torch.Tensor], world: World) -> None:
    """Give every rank its shards of rank 0's initial state (other ranks were built on the meta
    device), its buffers, and rank 0's random state (which building the model advanced)."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    from distrain.distributed.collectives import broadcast_object

    if not world.is_primary:
        model.to_empty(device=torch.device(world.device))
    set_model_state_dict(model, initial, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
    buffers = broadcast_object({name: buffer.cpu() for name, buffer in model.named_buffers()}
                               if world.is_primary else None)
    if not world.is_primary:
        with torch.no_grad():
            for name, buffer in model.named_buffers():
                buffer.copy_(buffers[name])
    torch.set_rng_state(broadcast_object(torch.get_rng_state() if world.is_primary else None))
    if world.is_primary:
        logger.info("fsdp: delayed initialisation: the other ranks built the model on the meta device "
                    "and received only their shards of rank 0's initial weights")


def clip_sharded_grad_norm(parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """Clip by the global norm over every rank's shards (a DTensor norm made whole)."""
    from torch.distributed.tensor import DTensor
    from torch.nn.utils import clip_grads_with_norm_, get_total_norm

    parameters = list(parameters)
    total = get_total_norm([p.grad for p in parameters if p.grad is not None])
    if isinstance(total, DTensor):
        total = total.full_tensor()
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def _reduce_scatter_for(device: torch.device) -> Any:
    """On CPU (gloo), a reduce-scatter that is an all-reduce in place plus this rank's slice: gloo's own
    copies its input and more (181 MiB above a 119 MiB input, measured), which at the end of backward
    sits on top of every gradient already reduced; the in-place all-reduce needs nothing beyond the
    input and output FSDP allocates. None elsewhere (NCCL's reduce-scatter is the better one)."""
    if device.type != "cpu":
        return None
    import torch.distributed as dist
    from torch.distributed.fsdp._fully_shard._fsdp_api import ReduceScatter

    class AllReduceInPlaceThenSlice(ReduceScatter):
        def allocate(self, size, *, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
            return torch.empty(*size, dtype=dtype, device=device)

        def __call__(self, output_tensor: torch.Tensor, input_tensor: torch.Tensor, group: Any, op: Any,
                     async_op: bool = False) -> None:
            dist.all_reduce(input_tensor, op=op, group=group)
            chunks = input_tensor.view(dist.get_world_size(group), -1)  # FSDP lays the input out rank by rank
            output_tensor.view(-1).copy_(chunks[dist.get_rank(group)])
            return None

    return AllReduceInPlaceThenSlice()


def _only_looks_up(unit: torch.nn.Module, model: torch.nn.Module) -> bool:
    """Whether every parameter of ``unit`` is the weight of an ``nn.Embedding`` that no module outside it
    also holds (a weight tied to an output layer is multiplied, so its backward needs it gathered)."""
    lookups = {id(module.weight) for module in unit.modules() if isinstance(module, torch.nn.Embedding)}
    own = {id(parameter) for parameter in unit.parameters()}
    if not own or own - lookups:
        return False
    inside = {id(module) for module in unit.modules()}
    return not any(id(parameter) in own for module in model.modules() if id(module) not in inside
                   for parameter in module.parameters(recurse=False))


def _declared_units(model: torch.nn.Module) -> list[str]:
    declared = getattr(model, "shard_units", None)
    return list(declared()) if callable(declared) else []


@contextlib.contextmanager
def parameters_on_meta() -> Iterator[None]:
    """Parameters registered inside move to the meta device as soon as they are made (one at a
    time, so the whole model is never held); buffers and other tensors stay real, so a model that
    keeps plain tensors (token ids, masks) still works once its parameters are materialised."""
    original = torch.nn.Module.register_parameter

    def register(module: torch.nn.Module, name: str, parameter: torch.nn.Parameter | None) -> None:
        if parameter is not None and not parameter.is_meta:
            parameter = torch.nn.Parameter(parameter.detach().to("meta"), requires_grad=parameter.requires_grad)
        original(module, name, parameter)

    torch.nn.Module.register_parameter = register
    try:
        yield
    finally:
        torch.nn.Module.register_parameter = original
