"""Training and validation curves per epoch, read from a run folder's ``metrics_epoch_N.json`` files.

:func:`collect_series` is pure file reading (what a test checks the plot against); :func:`plot_runs`
draws it with matplotlib (the optional ``plot`` extra), one panel per metric, runs overlaid and
labelled by folder, training solid and validation dashed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from distrain.errors import UsageError

SPLITS = ("training", "validation")
#: series[metric][split] = [(epoch, value), ...] in epoch order
Series = dict[str, dict[str, list[tuple[int, float]]]]


def collect_series(run_dir: str | Path, metrics: list[str] | None = None) -> Series:
    """Every numeric ``training_*``/``validation_*`` value of each epoch of ``run_dir`` (only
    ``metrics`` when given, e.g. ``["loss", "accuracy"]``)."""
    run_dir = Path(run_dir)
    files = []
    for path in run_dir.glob("metrics_epoch_*.json"):
        match = re.fullmatch(r"metrics_epoch_(\d+)\.json", path.name)
        if match:
            files.append((int(match.group(1)), path))
    series: Series = {}
    for epoch, path in sorted(files):
        values: dict[str, Any] = json.loads(path.read_text())
        for key, value in values.items():
            split, _, name = key.partition("_")
            if split not in SPLITS or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if metrics is not None and name not in metrics:
                continue
            series.setdefault(name, {}).setdefault(split, []).append((epoch, float(value)))
    return series


def plot_runs(run_dirs: list[str | Path], output: str | Path, metrics: list[str] | None = None) -> Path:
    """Draw the curves of ``run_dirs`` into the image ``output`` (PNG by its suffix)."""
    try:
        import matplotlib
    except ImportError:
        raise UsageError("plotting needs matplotlib: pip install 'distrain[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    collected = {str(run_dir): collect_series(run_dir, metrics) for run_dir in run_dirs}
    names = sorted({name for series in collected.values() for name in series},
                   key=lambda name: (name != "loss", name))
    if not names:
        wanted = f" for {', '.join(metrics)}" if metrics else ""
        raise UsageError(f"no per-epoch metrics{wanted} in {', '.join(map(str, run_dirs))} (metrics_epoch_N.json)")
    figure, axes = plt.subplots(len(names), 1, figsize=(7, 3 * len(names)), squeeze=False)
    for axis, name in zip(axes[:, 0], names):
        for number, (label, series) in enumerate(collected.items()):
            for split, points in series.get(name, {}).items():
                epochs = [epoch + 1 for epoch, _ in points]
                axis.plot(epochs, [value for _, value in points], color=f"C{number}", marker="o", markersize=3,
                          linestyle="-" if split == "training" else "--", label=f"{Path(label).name} {split}")
        axis.set_title(name)
        axis.set_xlabel("epoch")
        axis.grid(alpha=0.3)
        axis.legend(fontsize="small")
    figure.tight_layout()
    output = Path(output)
    figure.savefig(output, dpi=100)
    plt.close(figure)
    return output


#: ``DISTRAIN_CURVES`` values that turn the end-of-training plot off (drawing it costs about a second)
CURVES_OFF = {"0", "off", "false", "no", "none"}


def write_run_curves(run_dir: Path) -> Path | None:
    """``run_dir/curves.png`` when matplotlib is installed and ``DISTRAIN_CURVES`` is not ``off``
    (training calls this at its end)."""
    import importlib.util
    import logging
    import os

    if os.environ.get("DISTRAIN_CURVES", "on").strip().lower() in CURVES_OFF:
        return None
    if importlib.util.find_spec("matplotlib") is None:
        return None
    try:
        return plot_runs([run_dir], run_dir / "curves.png")
    except UsageError:
        return None  # no epoch finished
    except Exception as error:  # noqa: BLE001 - a plot must never fail a finished run
        logging.getLogger(__name__).warning("could not draw %s: %s", run_dir / "curves.png", error)
        return None
