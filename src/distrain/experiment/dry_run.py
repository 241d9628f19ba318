"""What a job of N processes would see and hold, answered by one process in seconds.

``distrain check CONFIG --world-size N`` resizes the config's ``distributed`` block to N processes,
validates it (degrees that do not divide N and ``device_weights`` of the wrong length are config
problems with their key path), checks the data against the job (fewer shard files than readers,
fewer training records than data-parallel ranks), then assembles rank 0's worker exactly as a real
one is assembled (:func:`distrain.experiment.assemble.assemble`) on torch's fake process group, with the model on
the meta device so no parameter memory is allocated whatever the model's size.

From that worker it reads the global batches (the loader's own sampler and slicing), every rank's
share of them, the steps per epoch, and the bytes this rank holds: parameters and gradients (the
trainable parameters, in their dtype), and optimizer state measured by running one optimizer step
on meta-device gradients and summing the tensors the optimizer then keeps (Adam: two moments and a
step count per parameter). No activation estimate is printed: activations depend on the inputs'
shapes and the autograd graph of each batch, which a meta-device pass does not reliably expose.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator

from distrain.config.errors import ConfigError, Problem
from distrain.errors import UsageError
from distrain.distributed.config import DistributedConfig, make_world
from distrain.distributed.world import World
from distrain.experiment.assemble import assemble
from distrain.training.state_bytes import StateBytes, held_parameters, held_state_bytes

#: placeholder rendezvous port for a multi-node dry run (nothing listens; the config needs one)
PLACEHOLDER_PORT = 29500


def resized_config(config: dict[str, Any], world_size: int, nodes: int = 1) -> dict[str, Any]:
    """``config`` with its ``distributed`` block describing ``world_size`` processes on ``nodes`` nodes.

    The device kind is kept (CUDA ids stay CUDA, ``-1`` stays CPU); everything else in the block
    (strategy, device_weights, backend) is kept as written, so it is checked at the new size.
    """
    if world_size < 1:
        raise UsageError(f"--world-size must be at least 1, got {world_size}")
    if nodes < 1:
        raise UsageError(f"--nodes must be at least 1, got {nodes}")
    if world_size % nodes:
        raise UsageError(f"--world-size {world_size} does not split evenly over --nodes {nodes}")
    per_node = world_size // nodes
    block = dict(config.get("distributed") or {})
    written = block.get("cuda_devices") or [-1]
    uses_cuda = isinstance(written, list) and any(isinstance(d, int) and d >= 0 for d in written)
    block["cuda_devices"] = list(range(per_node)) if uses_cuda else [-1] * per_node
    block["num_nodes"] = nodes
    block["node_rank"] = 0
    if nodes > 1:
        block.setdefault("master_port", PLACEHOLDER_PORT)
    return {**config, "distributed": block}


def check_streamed_shards(data: Any, dp_size: int) -> None:
    """Fewer shard files than readers (streamed splits of the data plan ``data``): a problem at the split's data
    path."""
    from distrain.data.reader import DataError

    problems = []
    splits = [(f"{split.name}_data_path", split.reader, split.path, split.loader) for split in (data.train, data.validation)]
    for key, reader, path, loader in splits:
        if path and loader.lazy:
            try:
                reader.check_shares(path, dp_size * max(1, loader.num_workers))
            except DataError as error:
                problems.append(Problem(key, str(error)))
    if problems:
        raise ConfigError(problems)


def check_records(train_records: int, dp_size: int) -> None:
    """Every data-parallel rank must receive at least one training record per epoch."""
    if train_records < dp_size:
        raise ConfigError([Problem(
            "train_data_path",
            f"{train_records} training record(s) for {dp_size} data-parallel ranks: ranks "
            f"{train_records}..{dp_size - 1} would never see data (use fewer ranks or more data)",
        )])


# ----------------------------------------------------------------------------------- the figures
@dataclass(frozen=True)
class RankShare:
    """One data-parallel rank's samples: in a full global batch, in the epoch's last one, in the epoch."""

    per_batch: int
    last_batch: int
    per_epoch: int


def rank_shares(loader: Any, epoch: int = 0) -> list[RankShare] | None:
    """Each data-parallel rank's share of ``loader``'s global batches in ``epoch`` (index = dp rank).

    Uses the loader's own sampler and slicing, so it is what real ranks receive. None for a streamed
    loader: its ranks read their own shards, so shares are known only while reading.
    """
    sampler = getattr(loader, "sampler", None)
    if sampler is None or not hasattr(loader, "slice_counts"):
        return None
    lengths = [len(batch) for batch in sampler.batches(epoch)]
    dp_size = loader.world.dp_size
    if not lengths:
        return [RankShare(0, 0, 0)] * dp_size
    totals = [0] * dp_size
    for length in set(lengths):
        counts = loader.slice_counts(length)
        times = lengths.count(length)
        for rank in range(dp_size):
            totals[rank] += counts[rank] * times
    first, last = loader.slice_counts(lengths[0]), loader.slice_counts(lengths[-1])
    return [RankShare(first[rank], last[rank], totals[rank]) for rank in range(dp_size)]


def state_bytes(model: Any, optimizer: Any) -> StateBytes:
    """What this rank will hold: optimizer state measured by one step on zero gradients (on the meta
    device this allocates nothing), then counted as a real worker counts it after training."""
    import torch

    trainable = [p for p in held_parameters(model) if p.requires_grad]
    for parameter in trainable:
        parameter.grad = torch.zeros_like(parameter)
    with torch.no_grad():
        optimizer.step()
    held = held_state_bytes(model, optimizer)
    optimizer.zero_grad(set_to_none=True)
    optimizer.state.clear()
    return held


@dataclass
class DryRun:
    """What ``distrain check --world-size N`` prints."""

    world_size: int
    nodes: int
    mesh: str
    dp_size: int
    dp_rank_of: list[int]
    strategy: str
    effective_batch: tuple[int, int, int, int]
    train_records: int
    steps_per_epoch: int
    shares: list[RankShare] | None
    state: StateBytes
    notes: list[str] = field(default_factory=list)
    #: how the model is split (tensor-parallel layers, pipeline stages)
    split: list[str] = field(default_factory=list)


def group_ranks(values: list[Any]) -> list[tuple[int, int, Any]]:
    """Runs of consecutive ranks with equal values: ``(first, last, value)``."""
    groups: list[tuple[int, int, Any]] = []
    for rank, value in enumerate(values):
        if groups and groups[-1][2] == value and groups[-1][1] == rank - 1:
            groups[-1] = (groups[-1][0], rank, value)
        else:
            groups.append((rank, rank, value))
    return groups


def human_bytes(count: int) -> str:
    """``1,576 B`` -> ``1.5 KiB (1,576 B)``: readable, with the exact count a test or a script can compare."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{count:,} B" if unit == "B" else f"{value:,.1f} {unit} ({count:,} B)"
        value /= 1024
    return f"{count:,} B"  # unreachable


def render(dry: DryRun, max_groups: int = 12) -> str:
    """The dry run as text: one line per fact; rank shares one line per run of equal ranks."""
    batch, per_worker, workers, accumulation = dry.effective_batch
    lines = [
        f"  dry run          {dry.world_size} process(es) on {dry.nodes} node(s); rank 0 assembled on a fake process group, model on the meta device",
        f"  device mesh      {dry.mesh}",
        *(f"  {line}" for line in dry.split),
        f"  data parallel    {dry.dp_size} rank(s)",
        f"  strategy         {dry.strategy}",
        f"  effective batch  {batch} = {per_worker} per worker x {workers} worker(s) x {accumulation} accumulation",
        f"  training records {dry.train_records}",
        f"  steps per epoch  {dry.steps_per_epoch}",
    ]
    if dry.shares is None:
        lines.append("  rank shares      streamed: each rank reads its own shards; shares are known only while reading")
    else:
        per_rank = [dry.shares[dp] for dp in dry.dp_rank_of]
        groups = group_ranks(per_rank)
        lines.append("  rank shares      samples per global batch (last batch), per epoch:")
        shown = groups if len(groups) <= max_groups else groups[: max_groups // 2] + [None] + groups[-max_groups // 2:]
        for group in shown:
            if group is None:
                lines.append(f"    ... {len(groups) - 2 * (max_groups // 2)} more run(s) of ranks ...")
                continue
            first, last, share = group
            ranks = f"rank {first}" if first == last else f"ranks {first}-{last}"
            lines.append(f"    {ranks}: {share.per_batch} ({share.last_batch}), {share.per_epoch} per epoch")
    state = dry.state
    lines += [
        "  per-rank state   (optimizer state measured by one optimizer step on meta-device gradients)",
        f"    parameters     {human_bytes(state.parameters)}",
        f"    gradients      {human_bytes(state.gradients)}",
        f"    optimizer      {human_bytes(state.optimizer)}",
        f"    total          {human_bytes(state.total)} (activations not estimated)",
    ]
    lines += [f"  note             {note}" for note in dry.notes]
    return "\n".join(lines)


@contextlib.contextmanager
def meta_device():
    """Tensors created inside (the model, its optimizer state) live on the meta device: shapes only. Pretrained
    models are built from their configs (transformers refuses to load weights onto the meta device)."""
    import torch

    from distrain.pretrained import weights_elsewhere

    with torch.device("meta"), weights_elsewhere():
        yield


def dry_run(config: dict[str, Any], world_size: int, nodes: int = 1) -> tuple[DryRun, Any]:
    """Validate ``config`` at ``world_size`` processes and assemble its rank 0; return the figures and
    the assembly (for the caller's own lines). Raises :class:`ConfigError` for every scale problem."""
    import tempfile

    from distrain.experiment.assemble import prepare_for_workers
    from distrain.experiment.plan import resolve_experiment

    config = resized_config(config, world_size, nodes)
    resolved = resolve_experiment(config)
    distributed = resolved.distributed
    dims = distributed.dims()
    check_streamed_shards(resolved.data_plan, dims.dp_size)
    prepared = prepare_for_workers(resolved, None)
    check_records(len(prepared.train), dims.dp_size)
    with tempfile.TemporaryDirectory() as scratch, dry_run_world(distributed) as world:
        # rank 0's place in the job, its device the meta device: parallelize moves the model
        # there (a no-op), where a real worker would move it to its CPU or CUDA device
        world = dataclasses.replace(world, device="meta")
        with meta_device():
            assembly = assemble(world, resolved, scratch, prepared)
        # outside the meta context: optimizers keep their step count as a CPU scalar they read back
        state = state_bytes(assembly.model, assembly.trainer.optimizer)
    strategy = type(assembly.strategy).__name__
    notes = []
    if distributed.uses_cuda:
        from distrain.distributed.devices import describe, missing_gpu_problems, visible_gpus

        if missing_gpu_problems(resolved):  # a plan for another machine: said, not refused
            notes.append(f"this machine's GPUs ({describe(visible_gpus())}) are not the {len(distributed.cuda_devices)} "
                         "per node planned for; the plan is for another machine")
    notes += assembly.strategy.dry_run_notes()
    figures = DryRun(
        world_size=world_size, nodes=nodes, mesh=dims.describe(), dp_size=dims.dp_size,
        dp_rank_of=[dims.dp_rank(rank) for rank in range(world_size)], strategy=strategy,
        effective_batch=assembly.effective_batch(world), train_records=len(prepared.train),
        steps_per_epoch=assembly.trainer.steps_per_epoch, shares=rank_shares(assembly.train_loader),
        state=state, notes=notes, split=assembly.parallel.described,
    )
    return figures, assembly


@contextlib.contextmanager
def dry_run_world(distributed: DistributedConfig | None, world_size: int | None = None) -> Iterator[World]:
    """Rank 0 of the configured job with no other process running: a fake process group (torch's
    ``fake`` backend, whose collectives do nothing) stands in for the job's, so the strategy, loaders
    and trainer are built exactly as a real rank 0 builds them, on the CPU, without training."""
    size = world_size or (distributed.world_size if distributed is not None else 1)
    local_size = min(size, len(distributed.cuda_devices)) if distributed is not None else 1
    world = make_world(0, size, 0, local_size, -1, distributed)
    if size == 1:
        yield world
        return
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=size)
    try:
        yield world
    finally:
        dist.destroy_process_group()
