"""What a search leaves behind: ``best_config.json``, ``trials.csv``, a summary table, ``search.png``."""

from __future__ import annotations

import csv
import json
import logging
from pathlib import Path
from typing import Any

from distrain.tuning.search import CONFIG_ATTR, EPOCHS_ATTR
from distrain.tuning.space import Param
from distrain.tuning.study import MESSAGE_ATTR

logger = logging.getLogger("distrain.tune")


def trial_rows(study: Any, params: list[Param]) -> list[dict[str, Any]]:
    """One row per trial: number, state, parameters, value, epochs, duration, message."""
    rows = []
    for trial in study.get_trials(deepcopy=False):
        duration = (
            (trial.datetime_complete - trial.datetime_start).total_seconds()
            if trial.datetime_complete and trial.datetime_start else None
        )
        row = {"number": trial.number, "state": trial.state.name}
        row.update({param.key: trial.params.get(param.key) for param in params})
        row.update({
            "value": trial.value,
            "epochs": trial.user_attrs.get(EPOCHS_ATTR),
            "duration_s": round(duration, 2) if duration is not None else None,
            "message": trial.user_attrs.get(MESSAGE_ATTR, ""),
        })
        rows.append(row)
    return rows


def best_trial(study: Any):
    """The best finished trial, or None when none finished."""
    from optuna.trial import TrialState

    if not study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        return None
    return study.best_trial


def write_outputs(study: Any, params: list[Param], directory: Path, metric: str) -> dict[str, Any]:
    """Write every output; return the best trial's number and value (or None) for the caller to print."""
    rows = trial_rows(study, params)
    with open(directory / "trials.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["number"])
        writer.writeheader()
        writer.writerows({k: ("" if v is None else v) for k, v in row.items()} for row in rows)
    best = best_trial(study)
    summary: dict[str, Any] = {"best_number": None, "best_value": None}
    if best is not None:
        (directory / "best_config.json").write_text(json.dumps(json.loads(best.user_attrs[CONFIG_ATTR]), indent=2))
        summary = {"best_number": best.number, "best_value": best.value, "best_params": best.params}
    print(summary_table(rows, params, metric, best.number if best is not None else None))
    if _write_plot(rows, params, directory / "search.png", metric):
        logger.info("wrote %s", directory / "search.png")
    return summary


def summary_table(rows: list[dict[str, Any]], params: list[Param], metric: str, best: int | None) -> str:
    """Every trial in number order, the best marked with *, then the counts per state."""
    header = ["#", "state", *[p.key for p in params], metric, "epochs", "seconds"]
    table = [header]
    for row in rows:
        mark = "*" if row["number"] == best else ""
        table.append([
            f"{row['number']}{mark}", row["state"].lower(), *[_short(row[p.key]) for p in params],
            _short(row["value"]), _short(row["epochs"]), _short(row["duration_s"]),
        ])
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["state"].lower()] = counts.get(row["state"].lower(), 0) + 1
    total_epochs = sum(row["epochs"] or 0 for row in rows)
    lines.append(f"{len(rows)} trials (" + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
                 + f"), {total_epochs} epochs in total")
    if best is not None:
        best_row = next(row for row in rows if row["number"] == best)
        lines.append(f"best: trial {best} with {metric} {best_row['value']:.4f}")
    return "\n".join(lines)


def _short(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _write_plot(rows: list[dict[str, Any]], params: list[Param], path: Path, metric: str) -> bool:
    """The objective by trial, then one slice per parameter; skipped when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.info("matplotlib is not installed: no search.png (pip install 'distrain[tune]')")
        return False
    done = [row for row in rows if row["value"] is not None]
    panels = 1 + len(params)
    columns = min(panels, 3)
    lines = (panels + columns - 1) // columns
    figure, axes = plt.subplots(lines, columns, figsize=(4.5 * columns, 3.5 * lines), squeeze=False)
    colours = {"COMPLETE": "tab:blue", "PRUNED": "tab:orange"}
    first = axes[0][0]
    for state, colour in colours.items():
        chosen = [row for row in done if row["state"] == state]
        first.scatter([r["number"] for r in chosen], [r["value"] for r in chosen], c=colour, label=state.lower())
    first.set_xlabel("trial")
    first.set_ylabel(metric)
    first.set_title("objective by trial")
    first.legend()
    for index, param in enumerate(params, start=1):
        axis = axes[index // columns][index % columns]
        for state, colour in colours.items():
            chosen = [row for row in done if row["state"] == state and row[param.key] is not None]
            axis.scatter([str(r[param.key]) if param.kind == "categorical" else r[param.key] for r in chosen],
                         [r["value"] for r in chosen], c=colour)
        if param.log:
            axis.set_xscale("log")
        axis.set_xlabel(param.key)
        axis.set_ylabel(metric)
    for index in range(panels, lines * columns):
        axes[index // columns][index % columns].axis("off")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return True
