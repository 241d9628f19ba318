"""Score or run a model over a loader: the same on one process or on many.

Each worker gets only its slice of every batch (the loader's split), so metrics, reduced once
when read, count every instance exactly once; predictions carry their dataset index and are put
back in input order. The trainer validates with :func:`evaluate`; ``distrain evaluate`` and
``distrain predict`` run these through :mod:`distrain.experiment.archive.jobs`.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from distrain.data.loader import DataLoader, to_device
from distrain.models.model import Model


def evaluate(
    model: Model, loader: DataLoader, device: torch.device | str = "cpu", autocast: Callable[[], Any] | None = None,
    forward_placeholders: bool = False,
) -> dict[str, float]:
    """The mean loss and every metric over ``loader``, each instance counted once over all workers.

    The loss is weighted by what each batch's mean is over: its samples, or the model's
    ``loss_weight`` (e.g. masked tokens), so the result is the global mean however data is split.
    ``autocast`` is a context factory for mixed precision (the trainer passes its own).
    ``forward_placeholders``: run a worker's placeholder slices too (their output unused), for
    strategies whose forward is a collective (sharded parameters gathered by every rank). Those run under
    ``no_grad``, not inference mode: a tensor made in inference mode stays one, and the buffers FSDP gathers
    parameters into are made by the first forward, which in a run resumed between an epoch's last batch and
    its validation is this one; training could then not gather into them ("Inplace update to inference tensor").
    """
    with torch.no_grad() if forward_placeholders else torch.inference_mode():
        return _evaluate(model, loader, device, autocast, forward_placeholders)


def _evaluate(model: Model, loader: DataLoader, device: torch.device | str, autocast: Callable[[], Any] | None,
              forward_placeholders: bool) -> dict[str, float]:
    import contextlib

    from distrain.distributed.collectives import all_reduce_sum, counted

    model.eval()
    _reset_metrics(model)
    autocast = autocast or contextlib.nullcontext
    loss_sum = torch.zeros((), dtype=torch.float64)
    weight_sum = torch.zeros((), dtype=torch.float64)
    for batch in loader:
        if batch.size == 0:  # a placeholder slice: this worker has no instances in this batch
            if forward_placeholders:
                with autocast(), model.metrics_frozen():
                    model(**to_device(batch.inputs, device))
            continue
        with autocast():
            output = model(**to_device(batch.inputs, device))
        if "loss" in output:
            weight = output["loss_weight"].double().cpu() if "loss_weight" in output else float(batch.size)
            loss_sum += output["loss"].double().cpu() * weight
            weight_sum += weight
    totals = all_reduce_sum(counted(torch.stack([loss_sum, weight_sum])))
    metrics = model.get_metrics(reset=True)
    if totals[1] > 0:
        metrics = {"loss": float(totals[0] / totals[1]), **metrics}
    return metrics


@torch.inference_mode()
def predict(model: Model, loader: DataLoader, device: torch.device | str = "cpu") -> list[dict[str, Any]]:
    """One human-readable output per instance, in dataset order, on every worker."""
    from distrain.distributed.collectives import all_gather_object, reports

    model.eval()
    mine: list[tuple[int, dict[str, Any]]] = []
    for batch in loader:
        if batch.size == 0:
            continue
        mine.extend(zip((int(i) for i in batch.indices), predict_inputs(model, batch.inputs, device)))
    _reset_metrics(model)  # labelled data fed the metrics; leave the model clean
    everyone = [pair for part in all_gather_object(mine if reports() else []) for pair in part]
    return [record for _, record in sorted(everyone, key=lambda pair: pair[0])]


@torch.inference_mode()
def predict_inputs(model: Model, inputs: dict[str, Any], device: torch.device | str = "cpu") -> list[dict[str, Any]]:
    """One human-readable output per item of one batch of model inputs (what ``distrain predict``
    writes per line, and what ``distrain serve`` answers per request)."""
    return model.predict(to_device(inputs, device))


def _reset_metrics(model: Model) -> None:
    for metric in model.metrics.values():
        metric.reset()
