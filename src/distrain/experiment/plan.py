"""An experiment config: its top-level keys (the :class:`Experiment` signature is their schema) and
their validation. :func:`load_experiment` goes from a file, overrides and plugins to a validated plan, frozen:
its ``distributed`` block and its data plan are built once; nothing here reads data or builds a model (see
:mod:`distrain.data.prepare` and :mod:`distrain.experiment.assemble`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Mapping

from distrain.config.constraints import NonNegativeInt
from distrain.config.errors import ConfigError, Problem
from distrain.config.schema import Build, Node, resolve_object
from distrain.data.loader import DataLoaderConfig
from distrain.data.prepare import DataPlan, DataSplit
from distrain.data.reader import DatasetReader
from distrain.data.vocabulary import VocabularyConfig
from distrain.distributed.config import DistributedConfig
from distrain.experiment.checks import module_problems
from distrain.experiment.field_check import field_problems
from distrain.experiment.model_keys import resolve_model_keys, split_model_keys
from distrain.experiment.namespaces import link_embedding_namespaces
from distrain.experiment.trainer_keys import ALLENNLP_TRAINER_KEYS, translate_trainer_keys
from distrain.config.lazy import Lazy
from distrain.models.model import Model
from distrain.training.step_parts import AssemblyOptions
from distrain.training.trainer import Trainer

logger = logging.getLogger(__name__)


SplitName = Literal["train", "validation", "test"]


class Experiment:
    """The top-level keys of a training config (this signature is their schema).

    AllenNLP's keys: ``test_data_path`` (read with the validation reader; evaluated after training when
    ``evaluate_on_test``), ``datasets_for_vocab_creation`` (the splits whose tokens make the vocabulary;
    default: every split read, as AllenNLP; labels always from every split), and the seeds ``random_seed`` (Python's,
    and the data order), ``numpy_seed`` and ``pytorch_seed``; each one not given is the trainer's
    ``random_seed``.
    """

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
        test_data_path: str | None = None,
        evaluate_on_test: bool = False,
        datasets_for_vocab_creation: list[SplitName] | None = None,
        random_seed: NonNegativeInt | None = None,
        numpy_seed: NonNegativeInt | None = None,
        pytorch_seed: NonNegativeInt | None = None,
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
        self.test_data_path = test_data_path
        self.evaluate_on_test = evaluate_on_test
        self.datasets_for_vocab_creation = datasets_for_vocab_creation

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        problems = []
        if arguments["evaluate_on_test"] and arguments["test_data_path"] is None:
            problems.append(Problem("evaluate_on_test", "needs test_data_path"))
        paths = {"train": arguments["train_data_path"], "validation": arguments["validation_data_path"],
                 "test": arguments["test_data_path"]}
        vocabulary = arguments["vocabulary"]
        if vocabulary is not None and vocabulary.argument("type") in ("from_files", "extend") and vocabulary.argument("directory"):
            from distrain.data.vocabulary_files import directory_problem

            problem = directory_problem(vocabulary.argument("directory"))
            problems += [Problem("vocabulary.directory", problem)] if problem else []
        for index, split in enumerate(arguments["datasets_for_vocab_creation"] or []):
            if paths[split] is None:
                problems.append(Problem(f"datasets_for_vocab_creation[{index}]", f'"{split}" has no {split}_data_path'))
        return problems


@dataclass(frozen=True)
class Seeds:
    """Python's seed (also the data order's), numpy's and torch's."""

    python: int
    numpy: int
    torch: int


@dataclass
class ResolvedExperiment:
    """A validated config: the evaluated ``config`` and the ``plan`` that builds it. Resolved once (in
    the parent of spawned workers) and handed to the workers as it is: they build, never re-validate.
    Its ``distributed`` block and ``data_plan`` are built once, at their first read."""

    plan: Build
    config: dict[str, Any]
    #: ``model.initializer`` / ``model.regularizer`` when applied at assembly (see :mod:`.model_keys`)
    model_keys: dict[str, Node] = field(default_factory=dict)
    #: AllenNLP's trainer keys kept for the run (``cuda_device``; see :mod:`.trainer_keys`)
    allennlp_trainer_keys: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Experiment:
        return self.plan.build()

    def trainer_options(self) -> AssemblyOptions:
        """The trainer block's keys that assemble builds the loop's parts from."""
        return self.plan.arguments["trainer"].options()

    def seeds(self) -> Seeds:
        trainer_seed = self.plan.arguments["trainer"].argument("random_seed")
        chosen = [self.plan.argument(name) for name in ("random_seed", "numpy_seed", "pytorch_seed")]
        return Seeds(*(trainer_seed if seed is None else seed for seed in chosen))

    @property
    def random_seed(self) -> int:
        """The seed of the data order (and of Python's ``random``)."""
        return self.seeds().python

    @cached_property
    def distributed(self) -> DistributedConfig | None:
        """The ``distributed`` block; without one, AllenNLP's ``trainer.cuda_device`` (a GPU id) is one
        process on that GPU (``-1`` or no ``cuda_device``: this process, on the CPU). With a block,
        ``cuda_device`` is ignored, as AllenNLP does."""
        node = self.plan.arguments.get("distributed")
        if node is not None:
            return node.build()
        device = self.cuda_device
        return DistributedConfig(cuda_devices=[device]) if device is not None and device >= 0 else None

    @cached_property
    def data_plan(self) -> DataPlan:
        """What reading the data needs (readers, paths, loaders, vocabulary settings, the cache key), from
        the built experiment. Not handed to the workers: they receive the data it prepared."""
        return data_plan_of(self.build(), self.config, self.distributed)

    @property
    def cuda_device(self) -> int | None:
        return self.allennlp_trainer_keys.get("cuda_device")

    def model_key(self, name: str) -> Any:
        """The built ``model.initializer`` or ``model.regularizer`` (None when not configured)."""
        node = self.model_keys.get(name)
        return node.build() if node is not None else None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("data_plan", None)  # its readers may hold tokenizers; a worker gets the prepared data
        return state


def data_plan_of(experiment: Experiment, config: dict[str, Any] | None = None,
                 distributed: DistributedConfig | None = None) -> DataPlan:
    """The data plan of a built experiment; ``config`` (its evaluated config) enables the shared cache;
    ``distributed`` (default: the experiment's) says how many data-parallel workers share a streamed split."""
    cache_config = None
    if config is not None and experiment.dataset_cache:
        cache_config = {name: config.get(name) for name in (
            "dataset_reader", "validation_dataset_reader", "train_data_path", "validation_data_path",
            "vocabulary", "test_data_path", "datasets_for_vocab_creation")}
    distributed = distributed if distributed is not None else experiment.distributed
    return DataPlan(
        train=DataSplit("train", experiment.dataset_reader, experiment.train_data_path, experiment.data_loader),
        validation=DataSplit("validation", experiment.validation_dataset_reader, experiment.validation_data_path,
                             experiment.validation_data_loader),
        vocabulary=experiment.vocabulary,
        read_workers=experiment.data_loader.num_workers,
        cache_config=cache_config,
        dp_size=distributed.dims().dp_size if distributed is not None else 1,
        test=(DataSplit("test", experiment.validation_dataset_reader, experiment.test_data_path,
                        experiment.validation_data_loader) if experiment.test_data_path else None),
        vocabulary_splits=(tuple(experiment.datasets_for_vocab_creation)
                           if experiment.datasets_for_vocab_creation is not None else None),
        model_archive=_model_archive(experiment.model),
    )


def _model_archive(model: Any) -> str | None:
    """The ``archive_file`` of a ``from_archive`` model block (a recipe, not built), else None. (By its registered
    name: :mod:`distrain.archived.model` stands above experiment/, whose archive code it loads.)"""
    kind = getattr(model, "cls", None)
    return model.argument("archive_file") if kind is not None and Model.name_of(kind) == "from_archive" else None


def resolve_experiment(config: dict[str, Any]) -> ResolvedExperiment:
    """Validate the whole config; raise :class:`ConfigError` listing every problem."""
    config = dict(config)
    config.setdefault("trainer", {})
    problems: list[Problem] = []
    model_config, taken = split_model_keys(config)
    model_config, allennlp_trainer_keys = translate_trainer_keys(model_config, problems)
    plan = resolve_object(Experiment, model_config, "", problems)
    model_keys = resolve_model_keys(taken, problems)
    problems = [_adapter_problem(problem, config) for problem in problems]
    if not problems and isinstance(plan, Build):
        problems += _seed_problems(plan)
    if not problems and isinstance(plan, Build):
        link_embedding_namespaces(plan)  # before anything builds the model, even on the meta device
        resolved = ResolvedExperiment(plan, config, model_keys, allennlp_trainer_keys)
        distributed = resolved.distributed
        if distributed is not None:
            problems += distributed.problems()
        problems += module_problems(plan)
        problems += field_problems(plan)
    if problems:
        raise ConfigError(problems)
    return resolved


def _seed_problems(plan: Build) -> list[Problem]:
    trainer = plan.arguments["trainer"]
    if "random_seed" in plan.arguments and isinstance(trainer, Build) and "random_seed" in trainer.arguments:
        return [Problem("trainer.random_seed", "also given as the top-level random_seed; keep one")]
    return []


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
    from distrain.experiment.model_keys import APPLIED_AT_ASSEMBLY

    return config_schema(Experiment, {Model: APPLIED_AT_ASSEMBLY, Trainer: ALLENNLP_TRAINER_KEYS})


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
