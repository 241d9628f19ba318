"""``distrain tune CONFIG SEARCH -s DIR``: hyperparameter search over any config with Optuna.

SEARCH maps dotted config keys (the paths ``-o`` takes) or ``extVar:NAME`` to distributions. Every corner
of the space is validated before the first trial; each trial is a ``distrain train`` subprocess in
``DIR/trial_NNNN/``; the study lives in ``--storage`` (default ``sqlite:///DIR/study.db``), so re-running the
same command after a crash continues it and several processes sharing it run disjoint trials.
"""

from __future__ import annotations

import argparse
import logging
import math
from pathlib import Path

from distrain.errors import UsageError

logger = logging.getLogger("distrain.tune")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from distrain.tuning.study import PRUNERS, SAMPLERS

    parser.add_argument("config", help="experiment file (jsonnet or JSON)")
    parser.add_argument("search", help="search space: jsonnet/JSON object of dotted keys (or extVar:NAME) to distributions")
    parser.add_argument("-s", "--serialization-dir", required=True, help="output directory of the search")
    parser.add_argument("--trials", type=int, default=16, help="trials the study ends with, in all processes (default 16)")
    parser.add_argument("--timeout", type=float, default=None, help="start no new trial after this many seconds")
    parser.add_argument("--storage", default=None, help="Optuna storage URL (default sqlite:///DIR/study.db)")
    parser.add_argument("--study-name", default=None, help="study name in the storage (default: DIR's name)")
    parser.add_argument("--sampler", choices=SAMPLERS, default="tpe")
    parser.add_argument("--pruner", choices=PRUNERS, default="median")
    parser.add_argument("--seed", type=int, default=0, help="sampler seed (default 0)")
    parser.add_argument("--n-jobs", type=int, default=1, help="trials run at once, each on its own share of the CPU cores")
    parser.add_argument(
        "-o", "--overrides", default=None, help="JSON merged into the config under every trial's parameters",
    )
    parser.add_argument("--ext-var", action="append", default=[], metavar="KEY=VALUE", help="a std.extVar value (repeatable)")
    parser.add_argument(
        "--include-package", action="append", default=[], metavar="MODULE",
        help="import MODULE first so its registered components exist (repeatable)",
    )


def run(args: argparse.Namespace) -> int:
    import logging

    from distrain.config.loading import parse_ext_vars
    from distrain.config.loading import evaluate_jsonnet, parse_overrides
    from distrain.plugins import import_plugins
    from distrain.tuning.space import grid_space, parse_search_space
    from distrain.tuning.trial_runner import objective_of
    from distrain.tuning.validation import point_config, validate_space

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.trials < 1:
        raise UsageError(f"--trials must be at least 1, got {args.trials}")
    if args.n_jobs < 1:
        raise UsageError(f"--n-jobs must be at least 1, got {args.n_jobs}")
    import_plugins(args.include_package)
    params = parse_search_space(evaluate_jsonnet(args.search))
    overrides = parse_overrides(args.overrides)
    ext_vars = parse_ext_vars(args.ext_var)
    checked = validate_space(args.config, params, overrides, ext_vars)
    logger.info("search space: %d key(s), valid at all %d corner point(s) checked", len(params), checked)
    grid = grid_space(params) if args.sampler == "grid" else None
    if grid is not None and args.trials > math.prod(len(values) for values in grid.values()):
        logger.warning("--trials %d is more than the grid's %d points: some points will repeat",
                       args.trials, math.prod(len(values) for values in grid.values()))
    first = {param.key: param.extremes()[0] for param in params}
    base = point_config(args.config, first, overrides, ext_vars)
    metric, direction = objective_of(base)
    max_epochs = (base.get("trainer") or {}).get("num_epochs")

    directory = Path(args.serialization_dir)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--serialization-dir {directory} exists and is not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    storage_url = args.storage or f"sqlite:///{directory.resolve() / 'study.db'}"
    study_name = args.study_name or directory.resolve().name
    study, storage = open_study(storage_url, study_name, direction, args, grid, max_epochs)
    check_trial_folders(directory, study)

    from distrain.tuning.report import write_outputs
    from distrain.tuning.search import Search, SearchSettings

    settings = SearchSettings(
        config_path=args.config, params=params, directory=directory, storage_url=storage_url,
        study_name=study_name, pruner=args.pruner, trials=args.trials, timeout=args.timeout, n_jobs=args.n_jobs,
        overrides=overrides, ext_vars=ext_vars, include_packages=args.include_package, max_epochs=max_epochs,
    )
    ran = Search(settings, study, storage).run()
    logger.info("this process ran %d trial(s): %s", len(ran), ", ".join(map(str, ran)) or "none")
    summary = write_outputs(study, params, directory, metric)
    if summary["best_number"] is not None:
        print(f"best config: {directory / 'best_config.json'}")
    return 0


def open_study(storage_url: str, study_name: str, direction: str, args: argparse.Namespace, grid, max_epochs):
    import optuna

    from distrain.tuning.study import make_pruner, make_sampler, open_storage, storage_lock

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with storage_lock(storage_url):
        try:
            storage = open_storage(storage_url)
        except Exception as error:  # noqa: BLE001 - a bad URL or unreachable server is bad input
            raise UsageError(f"--storage {storage_url}: {str(error).splitlines()[0]}") from None
        study = optuna.create_study(
            storage=storage, study_name=study_name, direction=direction, load_if_exists=True,
            sampler=make_sampler(args.sampler, args.seed, grid), pruner=make_pruner(args.pruner, max_epochs),
        )
    if study.direction.name.lower() != direction:
        raise UsageError(
            f'study "{study_name}" in {storage_url} is to {study.direction.name.lower()}, but the config\'s '
            f"trainer.validation_metric asks to {direction}"
        )
    return study, storage


def check_trial_folders(directory: Path, study) -> None:
    """Refuse a DIR whose trial folders belong to another study (their numbers would collide)."""
    known = {trial.number for trial in study.get_trials(deepcopy=False)}
    strangers = sorted(p.name for p in directory.glob("trial_*") if p.is_dir() and _number(p.name) not in known)
    if strangers:
        raise UsageError(
            f"{directory} holds {strangers[0]} from another study; use another -s DIR or the same --storage/--study-name"
        )


def _number(name: str) -> int | None:
    suffix = name.partition("_")[2]
    return int(suffix) if suffix.isdigit() else None
