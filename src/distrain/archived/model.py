"""AllenNLP's ``model: {type: "from_archive", archive_file: ...}``: train on from a trained model's archive."""

from __future__ import annotations

from typing import Any

from distrain.archived.module import ArchiveFileArgument
from distrain.config.errors import Problem
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model


@Model.register("from_archive")
class ArchivedModel(ArchiveFileArgument, Model):
    """The model in ``archive_file`` (distrain's ``model.tar.gz`` or AllenNLP's), with its trained weights, as the
    model of this run: fine-tuning, as AllenNLP's ``from_archive``. Constructing it returns that model itself.

    The run's vocabulary is the archive's, extended by the tokens of the data (see
    :mod:`distrain.data.prepare`): trained tokens keep their indices, and each embedding gets rows for the
    new ones (Xavier-uniform, as AllenNLP's ``extend_embedder_vocab``). A label the archive's model never had
    cannot be added (its output layer has no row for it): one line names it."""

    def __init__(self, vocab: Vocabulary, archive_file: str) -> None:  # the schema; __new__ builds
        raise AssertionError("unreachable: __new__ returns the archived model")

    def __new__(cls, vocab: Vocabulary | None = None, archive_file: str = "") -> Any:
        from distrain.experiment.archive.format import load_archive

        archive = load_archive(archive_file)
        model = archive.model
        if vocab is not None:  # the run's vocabulary extends the archive's (as it does already when distrain reads)
            _adopt(model, archive.vocab, archive.vocab.extended_with(vocab), archive_file)
        model.archived_model_config = archive.config["model"]  # this run's archive then stands alone
        model.train()
        return model


def _adopt(model: Model, trained: Vocabulary, vocab: Vocabulary, archive_file: str) -> None:
    """Give ``model`` the run's vocabulary (the archive's, extended): embeddings grow, labels may not."""
    from distrain.config.errors import ConfigError

    for namespace in trained.namespaces():
        if not trained.is_padded_namespace(namespace) and vocab.size(namespace) != trained.size(namespace):
            new = [label for label in vocab.tokens(namespace) if label not in trained.tokens(namespace)]
            raise ConfigError([Problem("model.archive_file", f'{archive_file} was trained without the "{namespace}" '
                                       f"{', '.join(map(repr, new[:5]))} the data has")])
    for module in model.modules():
        if hasattr(module, "extend_vocab"):
            module.extend_vocab(vocab)
    model.vocab = vocab
