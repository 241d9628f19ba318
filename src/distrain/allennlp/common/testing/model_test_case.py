"""``ModelTestCase``: a plugin project's own tests of its model, as AllenNLP's are written, on distrain's machinery.

``set_up_model(param_file, dataset_file)`` builds the config's reader, reads ``dataset_file``, counts its
vocabulary and builds the model (``self.reader``, ``self.instances``, ``self.vocab``, ``self.model``,
``self.dataset``). ``ensure_model_can_train_save_and_load(param_file)`` trains with ``distrain train`` (in this
process, so the components the test module imported are registered), loads the ``model.tar.gz`` it wrote, and
checks that the archive holds the trained best weights, that both models predict the same on the config's
validation data (else its training data), that every trainable parameter gets a gradient, and optionally a
final training metric. ``ensure_batch_predictions_are_consistent`` checks that one batch predicts what each
instance predicts alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable

import numpy
import torch

from distrain.allennlp.common.testing.test_case import AllenNlpTestCase


class _Batch:
    """The instances set up, indexed with the vocabulary: ``as_tensor_dict()`` is what ``forward`` takes."""

    def __init__(self, dataset: Any) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def as_tensor_dict(self) -> dict[str, Any]:
        return self.dataset.batch(numpy.arange(len(self.dataset)))


class ModelTestCase(AllenNlpTestCase):
    """A subclass calls :meth:`set_up_model` in its ``setup_method`` and the ``ensure_*`` checks in its tests."""

    def set_up_model(self, param_file: str | os.PathLike, dataset_file: str | os.PathLike,
                     serialization_dir: str | os.PathLike | None = None, seed: int | None = None) -> None:
        from distrain.data.dataset import IndexedDataset
        from distrain.data.vocabulary import Vocabulary
        from distrain.data.vocabulary_files import fixed_vocabulary

        if seed is not None:
            torch.manual_seed(seed)
            numpy.random.seed(seed)
        self.param_file = str(param_file)
        experiment = _experiment(self.param_file)
        self.reader = experiment.dataset_reader
        self.instances = list(self.reader.read(str(dataset_file)))
        self.vocab = fixed_vocabulary(experiment.vocabulary) or Vocabulary.from_instances(self.instances,
                                                                                          experiment.vocabulary)
        self.model = experiment.model.construct(vocab=self.vocab)
        self.dataset = _Batch(IndexedDataset.from_instances(self.instances, self.vocab))

    def ensure_model_can_train_save_and_load(
        self, param_file: str | os.PathLike, tolerance: float = 1e-4, cuda_device: int = -1,
        gradients_to_ignore: Iterable[str] | None = None, overrides: str = "", metric_to_check: str | None = None,
        metric_terminal_value: float | None = None, metric_tolerance: float = 1e-4, disable_dropout: bool = True,
        which_loss: str = "loss", seed: int | None = None,
    ) -> tuple[torch.nn.Module, torch.nn.Module]:
        """Train, archive, load; returns the trained model (its best weights) and the one loaded from the archive."""
        import json

        from distrain.allennlp.archival import load_archive
        from distrain.experiment.archive.jobs import read_dataset
        from distrain.training.checkpointing import load_state_file

        if seed is not None:
            torch.manual_seed(seed)
        save_dir = Path(self.TEST_DIR) / "save_and_load_test"
        _train(str(param_file), save_dir, overrides)
        archive = load_archive(str(save_dir / "model.tar.gz"), cuda_device=cuda_device)
        loaded = archive.model
        experiment = _experiment(str(param_file), overrides)
        model = experiment.model.construct(vocab=loaded.vocab)
        best = sorted(save_dir.rglob("best.safetensors"))
        assert best, f"training wrote no best weights under {save_dir}"
        model.load_state_dict(load_state_file(best[0], model))
        model.to(next(loaded.parameters()).device)
        trained_state, loaded_state = model.state_dict(), loaded.state_dict()
        assert trained_state.keys() == loaded_state.keys(), "the archived model has other weights than the trained one"
        for name, tensor in trained_state.items():
            torch.testing.assert_close(loaded_state[name], tensor, rtol=tolerance, atol=tolerance,
                                       msg=lambda message, name=name: f"weight {name}: {message}")
        if metric_to_check is not None:
            metrics = json.loads((save_dir / "metrics.json").read_text())
            value = metrics.get(f"best_validation_{metric_to_check}", metrics.get(f"training_{metric_to_check}"))
            assert value is not None, f"metrics.json has no {metric_to_check}"
            assert abs(value - metric_terminal_value) <= metric_tolerance, (
                f"{metric_to_check} is {value}, not {metric_terminal_value} (+-{metric_tolerance})")
        data_path = archive.config.get("validation_data_path") or archive.config["train_data_path"]
        dataset = read_dataset(archive.validation_dataset_reader, data_path, loaded.vocab)
        batch = _to(dataset.batch(numpy.arange(len(dataset))), next(loaded.parameters()).device)
        model.eval(), loaded.eval()
        with torch.no_grad(), model.metrics_frozen(), loaded.metrics_frozen():
            expected, got = model(**batch), loaded(**batch)
        for key in expected:
            _assert_same(key, got[key], expected[key], tolerance)
        self.check_model_computes_gradients_correctly(model, batch, set(gradients_to_ignore or ()), disable_dropout,
                                                      which_loss)
        return model, loaded

    def ensure_batch_predictions_are_consistent(self, keys_to_ignore: Iterable[str] = ()) -> None:
        """Each instance alone predicts what it predicts within the batch of all (padding cut off)."""
        self.model.eval()
        ignored = set(keys_to_ignore)
        whole = self.dataset.dataset
        with torch.no_grad(), self.model.metrics_frozen():
            batch = self.model(**whole.batch(numpy.arange(len(whole))))
            for index in range(len(whole)):
                alone = self.model(**whole.batch(numpy.array([index])))
                for key, value in alone.items():
                    if key in ignored or "loss" in key or not isinstance(value, torch.Tensor) or value.dim() == 0:
                        continue
                    within = batch[key][index][tuple(slice(0, size) for size in value[0].shape)]
                    _assert_same(f"{key} of instance {index}", within, value[0], 1e-4)

    @staticmethod
    def check_model_computes_gradients_correctly(model: torch.nn.Module, batch: dict[str, Any],
                                                 params_to_ignore: set[str] | None = None,
                                                 disable_dropout: bool = True, which_loss: str = "loss") -> None:
        """One backward pass from ``which_loss``: every trainable parameter not ignored gets a gradient."""
        model.train()
        if disable_dropout:
            for module in model.modules():
                if isinstance(module, torch.nn.Dropout):
                    module.eval()
        model.zero_grad()
        with model.metrics_frozen():
            model(**batch)[which_loss].backward()
        missing = [name for name, parameter in model.named_parameters()
                   if parameter.requires_grad and parameter.grad is None and name not in (params_to_ignore or ())]
        assert not missing, f"no gradient for {', '.join(missing)}"
        model.zero_grad()


def _experiment(param_file: str, overrides: str = "") -> Any:
    """The config's built experiment (reader, model recipe, vocabulary settings), plugins imported."""
    from distrain.allennlp.common.params import Params
    from distrain.experiment.plan import resolve_experiment
    from distrain.plugins import import_plugins

    import_plugins()
    config = Params.from_file(param_file, overrides).as_dict(quiet=True)
    return resolve_experiment(config).build()


def _train(param_file: str, save_dir: Path, overrides: str) -> None:
    """``distrain train PARAM_FILE -s SAVE_DIR -f`` in this process; a config error fails the test with its line."""
    import json

    from distrain.allennlp.common.params import parse_overrides
    from distrain.cli import build_parser
    from distrain.commands import train
    from distrain.errors import DistrainError

    words = ["train", param_file, "-s", str(save_dir), "-f"]
    if overrides:
        words += ["-o", json.dumps(parse_overrides(overrides))]
    try:
        train.run(build_parser("train").parse_args(words))
    except DistrainError as error:
        raise AssertionError(f"distrain train {param_file} failed: {error}") from None


def _to(batch: Any, device: torch.device) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: _to(value, device) for key, value in batch.items()}
    return batch


def _assert_same(name: str, got: Any, expected: Any, tolerance: float) -> None:
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected, rtol=tolerance, atol=tolerance,
                                   msg=lambda message: f"{name}: {message}")
    elif isinstance(expected, dict):
        for key in expected:
            _assert_same(f"{name}.{key}", got[key], expected[key], tolerance)
    elif isinstance(expected, (list, tuple)) and expected and isinstance(expected[0], torch.Tensor):
        for index, (one, other) in enumerate(zip(got, expected)):
            _assert_same(f"{name}[{index}]", one, other, tolerance)
    else:
        assert got == expected, f"{name}: {got!r} != {expected!r}"
