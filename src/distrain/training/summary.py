"""The short table rank 0 prints when a run ends: the numbers that matter, and where things are.

:func:`render_table` and :func:`training_rows`/:func:`evaluation_rows` are pure (a metrics dict and a
few figures in, text out), so they are tested directly; the call sites only gather the figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"
    return str(value)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(int(minutes), 60)
    return f"{hours}:{minutes:02d}:{secs:04.1f}" if hours else f"{minutes}:{secs:04.1f}"


def training_rows(
    metrics: dict[str, Any], validation_metric: str, seconds: float, examples: int,
    archive: Path | None, logs: Path,
) -> list[tuple[str, str]]:
    """Rows of a finished training run from its last epoch's ``metrics`` (``metrics.json``).

    ``validation_metric`` is the tracked name without its sign (``accuracy``); ``examples`` the training
    samples processed over all epochs and workers in ``seconds`` (validation time included).
    """
    rows: list[tuple[str, str]] = []
    if "epoch" in metrics:
        rows.append(("epochs trained", str(int(metrics["epoch"]) + 1)))
    if "best_epoch" in metrics:
        rows.append(("best epoch", str(int(metrics["best_epoch"]) + 1)))
    best = metrics.get(f"best_validation_{validation_metric}")
    if best is not None and validation_metric != "loss":
        rows.append((f"best validation {validation_metric}", _number(best)))
    if metrics.get("best_validation_loss") is not None:
        rows.append(("best validation loss", _number(metrics["best_validation_loss"])))
    if metrics.get("training_loss") is not None:
        rows.append(("final training loss", _number(metrics["training_loss"])))
    rows.append(("duration", _duration(seconds)))
    if seconds > 0:
        rows.append(("examples/s", f"{examples / seconds:,.1f}"))
    if archive is not None:
        rows.append(("archive", str(archive)))
    rows.append(("logs", str(logs)))
    return rows


def evaluation_rows(metrics: dict[str, Any], seconds: float, examples: int, archive: str, output: str) -> list[tuple[str, str]]:
    """Rows of a finished evaluation: every metric, speed, and where its input and output are."""
    rows = [(name, _number(value)) for name, value in metrics.items() if isinstance(value, (int, float))]
    rows.append(("examples", f"{examples:,}"))
    rows.append(("duration", _duration(seconds)))
    if seconds > 0:
        rows.append(("examples/s", f"{examples / seconds:,.1f}"))
    rows += [("archive", archive), ("metrics written to", output)]
    return rows


def render_table(title: str, rows: list[tuple[str, str]]) -> str:
    """``title`` and aligned ``label  value`` lines."""
    width = max((len(label) for label, _ in rows), default=0)
    return "\n".join([title] + [f"  {label.ljust(width)}  {value}" for label, value in rows])


def epoch_examples(loader: Any) -> int:
    """Training samples in one epoch over all workers (the global batches' sizes when known)."""
    sampler = getattr(loader, "sampler", None)
    if sampler is not None:
        return sum(len(batch) for batch in sampler.batches(0))
    source = getattr(loader, "source", None)
    return len(source) if source is not None else 0


def print_training_summary(trainer: Any, metrics: dict[str, Any], archive: Path | None) -> None:
    """Rank 0, at the end of ``train``: gather the figures from the trainer and print the table."""
    epochs = int(metrics.get("epoch", -1)) + 1
    rows = training_rows(
        metrics, trainer.tracker.name, trainer.elapsed(), epochs * epoch_examples(trainer.train_loader),
        archive, trainer.serialization_dir / f"out_worker{trainer.world.rank}.log",
    )
    print(render_table(f"run summary ({trainer.serialization_dir})", rows), flush=True)
