"""What a checkpoint must hold for a resumed run to reach the very result of an uninterrupted one.

The data position is (epoch, global batches consumed) of the global order of
:mod:`distrain.data.sampler`, which depends only on the seed and the epoch. Resuming skips exactly
the consumed global batches, whatever the number of workers now.

Each worker also has state of its own: its random streams and its share of the epoch's training
loss and metric statistics. Rank 0 gathers them into the checkpoint. Resumed on the same number of
workers, every rank takes back its own. On a different number, the summed loss and metric
statistics go to rank 0 and the other ranks start from zero (sums are what is reduced, so the
epoch's reported metrics are unchanged), and rank ``r`` continues the random streams of old rank
``r mod old_size``: dropout masks then differ from the original run, the data order does not.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import torch

from distrain.distributed.collectives import counted, reports
from distrain.training import random_state

logger = logging.getLogger(__name__)


@dataclass
class EpochProgress:
    """How far into ``epoch`` training is: global batches consumed and this worker's loss sums."""

    epoch: int = 0
    batches: int = 0
    #: Σ loss × weight and Σ weight (weight: samples, or the model's ``loss_weight``, e.g. masked tokens)
    loss_sum: torch.Tensor = field(default_factory=lambda: torch.zeros((), dtype=torch.float64))
    samples: int = 0
    loss_weight: torch.Tensor = field(default_factory=lambda: torch.zeros((), dtype=torch.float64))

    def next_epoch(self) -> EpochProgress:
        return EpochProgress(self.epoch + 1)

    def to(self, device: torch.device) -> EpochProgress:
        """Keep the sums on ``device`` (the loss's), so adding to them never waits for the device."""
        self.loss_sum = self.loss_sum.to(device)
        self.loss_weight = self.loss_weight.to(device)
        return self

    def add(self, losses: list[tuple[torch.Tensor, Any, int]]) -> None:
        """Count a step's (mean loss, what it averages over, samples) of this worker."""
        for loss, weight, samples in losses:
            self.loss_sum += loss.double() * weight
            self.loss_weight += weight
            self.samples += samples


class RankParts:
    """State each worker holds for itself, saved for every rank and put back on resume.

    ``random`` (every random stream), ``epoch_sums`` (this worker's loss sums so far in the epoch) and
    ``metric_sums`` (its metrics' sufficient statistics). On the same number of workers every rank
    takes back its own; on another number, sums go to rank 0 (the others start from zero: sums are
    what is reduced, so reported figures are unchanged) and rank ``r`` continues old rank ``r mod n``'s
    random streams.
    """

    def __init__(self, progress: EpochProgress, model: torch.nn.Module, parts: dict[str, Any] | None = None) -> None:
        self.progress = progress
        self.model = model
        #: the strategy's per-worker state (e.g. local SGD's parameters between averages)
        self.parts = parts or {}

    def state_dict(self) -> dict[str, Any]:
        """Sums only where they count (a rank that does not report, under model parallelism, saves
        zeros), so they add up to the run's figures under any other layout."""
        return {
            "parts": {name: part.state_dict() for name, part in self.parts.items()},
            "rng": random_state.capture(),
            "loss_sum": counted(self.progress.loss_sum.detach().to("cpu", copy=True)),
            "samples": self.progress.samples if reports() else 0,
            "loss_weight": counted(self.progress.loss_weight.detach().to("cpu", copy=True)),
            "metrics": {name: metric.state() for name, metric in self.model.metrics.items()} if reports() else {},
        }

    def load_from_ranks(self, ranks: list[dict[str, Any]], rank: int, world_size: int) -> None:
        local = _local_state(ranks, rank, world_size)
        random_state.restore(local["rng"])
        self.progress.loss_sum = local["loss_sum"]
        self.progress.samples = local["samples"]
        self.progress.loss_weight = local["loss_weight"]
        for name, metric in self.model.metrics.items():
            metric.load_state(local["metrics"].get(name, {}))
        for name, part in self.parts.items():  # on another world size none: all start from rank 0's
            part.load_state_dict(local.get("parts", {}).get(name))


class CallbackStates:
    """The callbacks' states as one part; callbacks may change on resume, then none is restored."""

    def __init__(self, callbacks: list) -> None:
        self.callbacks = callbacks

    def state_dict(self) -> list[dict[str, Any]]:
        return [callback.state_dict() for callback in self.callbacks]

    def load_state_dict(self, states: list[dict[str, Any]]) -> None:
        if len(states) == len(self.callbacks):
            for callback, saved in zip(self.callbacks, states):
                callback.load_state_dict(saved)


def order_fingerprint(sampler: Any, epoch: int, cut: bool = True) -> str:
    """A hash of the epoch's global batches: equal iff resuming continues the same sample order. With
    ``cut=False`` only the order of the samples counts, not where the batches end: a run whose global batch is
    cut into other micro-batches (another world, ``global_batch_size``) still trains the same steps."""
    if sampler is None or not hasattr(sampler, "batches"):
        return ""
    digest = hashlib.sha256()
    for batch in sampler.batches(epoch):
        if cut:
            digest.update(len(batch).to_bytes(8, "little"))
        digest.update(batch.astype("int64").tobytes())
    return digest.hexdigest()


def samples_in_batches(sampler: Any, epoch: int, batches: int) -> int | None:
    """How many samples the epoch's first ``batches`` global batches hold (None without a sampler that tells)."""
    if sampler is None or not hasattr(sampler, "batches"):
        return None
    return int(sum(len(batch) for batch in sampler.batches(epoch)[:batches]))


def position_in_batches(sampler: Any, saved: dict[str, Any]) -> int:
    """A saved data position (epoch, batches, and the samples those batches held) in this run's batches. They
    differ when the global batch is cut into other micro-batches here (``global_batch_size`` on another world):
    the run goes on after the same samples of the same order, or is refused if no batch of its ends there."""
    samples = saved.get("samples")
    if samples is None:
        return int(saved["batches"])
    found = batches_holding(sampler, saved["epoch"], samples)
    if found is None:
        from distrain.training.checkpointing import CheckpointError

        raise CheckpointError(f"the checkpoint stopped {samples} samples into epoch {saved['epoch'] + 1}, where no "
                              "batch of this run ends (its micro-batches are cut otherwise); resuming would repeat "
                              "or skip samples")
    if found != saved["batches"]:
        logger.info("the checkpoint's %d batch(es) of epoch %d (%d samples) are %d batch(es) of this run",
                    saved["batches"], saved["epoch"] + 1, samples, found)
    return found


def batches_holding(sampler: Any, epoch: int, samples: int) -> int | None:
    """How many of the epoch's global batches hold exactly its first ``samples`` samples; None when no
    batch ends there (or the sampler does not tell)."""
    if sampler is None or not hasattr(sampler, "batches"):
        return None
    total = 0
    for count, batch in enumerate(sampler.batches(epoch)):
        if total == samples:
            return count
        total += len(batch)
    return len(sampler.batches(epoch)) if total == samples else None


def vocabulary_fingerprint(model: torch.nn.Module) -> str:
    vocab = getattr(model, "vocab", None)
    if vocab is None or not hasattr(vocab, "namespaces"):
        return ""
    content = {namespace: vocab.tokens(namespace) for namespace in vocab.namespaces()}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def fits_problem(state: dict[str, Any], model: torch.nn.Module, sampler: Any, epoch: int) -> str | None:
    """Why a checkpoint's training ``state`` cannot resume this run (other data, order or seed), or None."""
    vocabulary = vocabulary_fingerprint(model)
    if state["vocabulary"] and vocabulary and state["vocabulary"] != vocabulary:
        return "the vocabulary differs from the checkpoint's (the data changed?)"
    saved_base = state.get("adapter_base")
    if saved_base:
        from distrain.modules.adapter import base_digest

        digest = base_digest(model)
        if digest is not None and digest != saved_base:
            return (f"the adapter's base model {model.adapter_base} has other weights than the checkpoint was trained "
                    f"on (sha256 {digest[:16]}…, expected {saved_base[:16]}…)")
    order = order_fingerprint(sampler, epoch)
    if state["order"] and order and state["order"] != order:
        samples = order_fingerprint(sampler, epoch, cut=False)
        if not (state.get("sample_order") and state["sample_order"] == samples):
            return (f"the global sample order of epoch {epoch + 1} differs from the checkpoint's "
                    "(training data, seed or global batch size changed); resuming would repeat or skip samples")
    return None


def _local_state(ranks: list[dict[str, Any]], rank: int, world_size: int) -> dict[str, Any]:
    if len(ranks) == world_size:
        return ranks[rank]
    merged = {
        "rng": ranks[rank % len(ranks)]["rng"],
        "loss_sum": torch.zeros((), dtype=torch.float64),
        "samples": 0,
        "loss_weight": torch.zeros((), dtype=torch.float64),
        "metrics": {},
    }
    if rank == 0:
        merged["loss_sum"] = sum((r["loss_sum"] for r in ranks), torch.zeros((), dtype=torch.float64))
        merged["samples"] = sum(r["samples"] for r in ranks)
        merged["loss_weight"] = sum((r["loss_weight"] for r in ranks), torch.zeros((), dtype=torch.float64))
        merged["metrics"] = _summed_metric_states([r["metrics"] for r in ranks])
    return merged


def _summed_metric_states(states: list[dict[str, dict[str, torch.Tensor]]]) -> dict[str, dict[str, torch.Tensor]]:
    """Sufficient statistics add up (as in ``Metric.accumulate``); differing shapes (kept scores) are concatenated."""
    summed: dict[str, dict[str, torch.Tensor]] = {}
    for state in states:
        for metric, stats in state.items():
            target = summed.setdefault(metric, {})
            for name, value in stats.items():
                if name not in target:
                    target[name] = value.clone()
                elif target[name].shape == value.shape:
                    target[name] = target[name] + value
                else:
                    target[name] = torch.cat([target[name].reshape(-1), value.reshape(-1)])
    return summed
