"""An experiment config: its top-level keys (the :class:`Experiment` signature is their schema) and
their validation. :func:`load_experiment` goes from a file, overrides and plugins to a validated plan;
nothing here reads data or builds a model (see :mod:`distrain.experiment.prepare` and :mod:`distrain.experiment.assemble`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from distrain.config.errors import ConfigError, Problem
from distrain.config.schema import Build, resolve_object
from distrain.data.loader import DataLoaderConfig
from distrain.data.reader import DatasetReader
from distrain.data.vocabulary import VocabularyConfig
from distrain.distributed.config import DistributedConfig
from distrain.experiment.checks import module_problems
from distrain.config.lazy import Lazy
from distrain.models.model import Model
from distrain.training.trainer import Trainer

logger = logging.getLogger(__name__)


class Experiment:
    """The top-level keys of a training config (this signature is their schema)."""

    def __init__(
        self,
        dataset_reader: DatasetReader,
        train_data_path: str,
        model: Lazy[Model],
        trainer: Lazy[Trainer],
        validation_data_path: str | None = None,
        validation_dataset_reader: DatasetReader | None = None,
        vocabulary: VocabularyConfig | None = None,
        data_loader: DataLoaderConfig | None = None,
        validation_data_loader: DataLoaderConfig | None = None,
        distributed: DistributedConfig | None = None,
        dataset_cache: bool = True,
    ) -> None:
        self.dataset_reader = dataset_reader
        self.train_data_path = train_data_path
        self.model = model
        self.trainer = trainer
        self.validation_data_path = validation_data_path
        self.validation_dataset_reader = validation_dataset_reader or dataset_reader
        self.vocabulary = vocabulary or VocabularyConfig()
        self.data_loader = data_loader or DataLoaderConfig()
        self.validation_data_loader = validation_data_loader or DataLoaderConfig(
            batch_size=self.data_loader.batch_size, shuffle=False
        )
        self.distributed = distributed
        #: reuse / write the shared dataset cache (see :mod:`distrain.data.cache`)
        self.dataset_cache = dataset_cache
    

@dataclass
class ResolvedExperiment:
    """A validated config: the evaluated ``config`` and the ``plan`` that builds it. Resolved once (in
    the parent of spawned workers) and handed to the workers as it is: they build, never re-validate."""

    plan: Build
    config: dict[str, Any]

    def build(self) -> Experiment:
        return self.plan.build()

    @property
    def random_seed(self) -> int:
        return self.plan.arguments["trainer"].argument("random_seed")

    @property
    def distributed(self) -> DistributedConfig | None:
        node = self.plan.arguments.get("distributed")
        return node.build() if node is not None else None


def resolve_experiment(config: dict[str, Any]) -> ResolvedExperiment:
    """Validate the whole config; raise :class:`ConfigError` listing every problem."""
    config = dict(config)
    config.setdefault("trainer", {})
    problems: list[Problem] = []
    plan = resolve_object(Experiment, config, "", problems)
    problems = [_adapter_problem(problem, config) for problem in problems]
    if not problems and isinstance(plan, Build):
        resolved = ResolvedExperiment(plan, config)
        distributed = resolved.distributed
        if distributed is not None:
            problems += distributed.problems()
        problems += module_problems(plan)
    if problems:
        raise ConfigError(problems)
    return resolved


def _adapter_problem(problem: Problem, config: dict[str, Any]) -> Problem:
    """``model.adapter`` on a model that takes none: say why (it holds no transformers model) and which do."""
    if problem.path != "model.adapter" or not problem.message.startswith("unknown key"):
        return problem
    import inspect

    takers = [name for name in Model.list_available()
              if "adapter" in inspect.signature(Model.by_name(name).__init__).parameters]
    kind = config.get("model", {}).get("type") if isinstance(config.get("model"), dict) else None
    return Problem(problem.path, f"{kind or 'this model'} holds no transformers model to adapt; adapters apply "
                                 f"to {', '.join(takers)}")


def experiment_schema() -> dict[str, Any]:
    """The JSON Schema of a training config, with every component registered right now."""
    from distrain.config.json_schema import config_schema

    return config_schema(Experiment)


def load_experiment(
    path: str, overrides: str | None = None, ext_vars: list[str] = (), include_packages: list[str] = (),
) -> tuple[dict[str, Any], ResolvedExperiment]:
    """The evaluated config of ``path`` (with ``--ext-var`` pairs and ``-o`` overrides) and its
    validated plan; plugins are imported first so their components can be named."""
    from distrain.config.loading import load_config, parse_ext_vars

    return validate_experiment(load_config(path, overrides, parse_ext_vars(list(ext_vars))), include_packages)


def validate_experiment(
    config: dict[str, Any], include_packages: list[str] = ()
) -> tuple[dict[str, Any], ResolvedExperiment]:
    """An evaluated config's validated plan, with plugins imported first."""
    from distrain.plugins import import_plugins

    import_plugins(list(include_packages))
    return config, resolve_experiment(config)
