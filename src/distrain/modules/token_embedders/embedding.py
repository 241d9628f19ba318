"""AllenNLP's ``embedding``: a lookup table over a vocabulary namespace, optionally started from
pretrained vectors (GloVe or word2vec text format, a local file: plain, compressed, or inside a zip or tar archive
as AllenNLP's ``(archive)#member`` uri names it; see :mod:`distrain.modules.token_embedders.embeddings_text_file`).

Only the vocabulary's tokens are read from the vectors file, so a 5 GB GloVe file costs the memory of
the vocabulary; tokens the file lacks start from a normal draw with the loaded vectors' mean and
standard deviation, as in AllenNLP.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any

import torch

from distrain.config.constraints import Must, PositiveFloat, PositiveInt
from distrain.config.errors import ConfigError
from distrain.config.lazy import Lazy
from distrain.modules.token_embedder import TokenEmbedder
from distrain.modules.token_embedders.embeddings_text_file import EmbeddingsTextFile, parse_embeddings_file_uri

logger = logging.getLogger(__name__)


def _local_file(path: str) -> bool:
    main, _ = parse_embeddings_file_uri(path)
    return "://" not in main and Path(main).is_file()


VectorsFile = Annotated[str, Must("be a local vectors file that exists (distrain downloads nothing)", _local_file)]


@TokenEmbedder.register("embedding")
class Embedding(TokenEmbedder):
    """``num_embeddings`` defaults to the size of ``vocab_namespace``; the model passes its vocabulary.

    ``vocab_namespace`` is the namespace of the ids it looks up: given, or taken from the indexer this
    embedder is paired with (see :mod:`distrain.experiment.namespaces`), else ``tokens`` (AllenNLP's
    default). A known namespace must fit: a stated ``num_embeddings`` smaller than it, or a namespace the
    vocabulary lacks, is a config error when the model is built, not an index error at the first step.
    """

    runtime_args = ("vocab",)
    #: AllenNLP's name for the projection (archives, initializer regexes)
    allennlp_names = {"_projection": "projection"}

    def __init__(
        self, embedding_dim: PositiveInt, num_embeddings: PositiveInt | None = None,
        projection_dim: PositiveInt | None = None, padding_index: int | None = None, trainable: bool = True,
        max_norm: PositiveFloat | None = None, norm_type: PositiveFloat = 2.0, scale_grad_by_freq: bool = False,
        sparse: bool = False, vocab_namespace: str | None = None, pretrained_file: VectorsFile | None = None,
        vocab: Any = None,
    ) -> None:
        super().__init__()
        if num_embeddings is None and vocab is None:
            raise ValueError("num_embeddings is needed when no vocabulary is passed")
        if vocab is not None and (num_embeddings is None or vocab_namespace is not None):
            num_embeddings = _fitting_size(vocab, vocab_namespace or "tokens", num_embeddings)
        vocab_namespace = vocab_namespace or "tokens"
        self.padding_index, self.max_norm, self.norm_type = padding_index, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        self.weight = torch.nn.Parameter(torch.empty(num_embeddings, embedding_dim), requires_grad=trainable)
        if pretrained_file is not None and not self.weight.is_meta:
            if vocab is None:
                raise ValueError("pretrained_file needs the vocabulary")
            with torch.no_grad():
                self.weight.copy_(read_vectors(pretrained_file, vocab, vocab_namespace, embedding_dim))
        elif not self.weight.is_meta:
            torch.nn.init.xavier_uniform_(self.weight)
        if padding_index is not None and not self.weight.is_meta:
            with torch.no_grad():
                self.weight[padding_index].zero_()
        self.projection = torch.nn.Linear(embedding_dim, projection_dim) if projection_dim else None
        self.output_dim = projection_dim or embedding_dim
        self.vocab_namespace = vocab_namespace

    def extend_vocab(self, vocab: Any, vocab_namespace: str | None = None, extension_pretrained_file: str | None = None,
                     model_path: str | None = None) -> None:
        """Rows for the tokens ``vocab`` added to this embedding's namespace (or ``vocab_namespace``) after the trained
        ones: their vectors in ``extension_pretrained_file`` where it has them, else Xavier-uniform (AllenNLP's
        ``extend_vocab``); the trained rows stay as they are. ``model_path`` is AllenNLP's, for its messages."""
        namespace = vocab_namespace or self.vocab_namespace
        if namespace is None:  # an embedding that does not know its namespace: "tokens" would be a guess
            logger.warning("extend_vocab: no vocab_namespace given and none known to this embedding; not extended")
            return
        extra = vocab.get_vocab_size(namespace) - self.weight.shape[0]
        if extra < 0:
            raise ConfigError(f"extend_vocab: namespace {namespace!r} has {vocab.get_vocab_size(namespace)} tokens, "
                              f"fewer than this embedding's {self.weight.shape[0]} rows: probably not the vocabulary "
                              f"it was trained with")
        if extra == 0:
            return
        rows = torch.nn.init.xavier_uniform_(torch.empty(extra, self.weight.shape[1], dtype=self.weight.dtype))
        if extension_pretrained_file is not None:
            wanted = {index - self.weight.shape[0]: token for token, index in
                      vocab.get_token_to_index_vocabulary(namespace).items() if index >= self.weight.shape[0]}
            with EmbeddingsTextFile(str(extension_pretrained_file)) as lines:
                positions = {token: position for position, token in wanted.items()}
                for line in lines:
                    token, _, rest = line.rstrip().partition(" ")
                    values = rest.split(" ")
                    if token in positions and len(values) == rows.shape[1]:
                        rows[positions[token]] = torch.tensor([float(value) for value in values], dtype=rows.dtype)
        self.weight = torch.nn.Parameter(torch.cat([self.weight.detach(), rows.to(self.weight.device)]),
                                         requires_grad=self.weight.requires_grad)

    @property
    def _vocab_namespace(self) -> str | None:
        """AllenNLP's name for :attr:`vocab_namespace` (its models set it to ``None`` when they predate it)."""
        return self.vocab_namespace

    @_vocab_namespace.setter
    def _vocab_namespace(self, value: str | None) -> None:
        self.vocab_namespace = value

    def allennlp_tensor(self, name: str, tensor: torch.Tensor, mine: torch.Tensor) -> torch.Tensor:
        """AllenNLP sizes a ``character_encoding``'s table by ``tokens`` (its default namespace): rows past this
        table's namespace are never looked up, so they are dropped; any other difference is left to refuse."""
        if name == "weight" and tensor.dim() == 2 and tensor.shape[1] == mine.shape[1] \
                and tensor.shape[0] > mine.shape[0]:
            return tensor[:mine.shape[0]]
        return tensor

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        return recipe.argument("projection_dim") or recipe.argument("embedding_dim")

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        embedded = torch.nn.functional.embedding(tokens, self.weight, self.padding_index, self.max_norm,
                                                 self.norm_type, self.scale_grad_by_freq, self.sparse)
        return self.projection(embedded) if self.projection is not None else embedded


def embedding_file_words(path: str) -> set[str]:
    """The tokens a vectors file has vectors for (the vocabulary's ``pretrained_files``); a word2vec header skipped."""
    with EmbeddingsTextFile(str(path)) as lines:  # a word2vec header is skipped there
        return {line.rstrip("\n").partition(" ")[0] for line in lines}


def _fitting_size(vocab: Any, namespace: str, stated: int | None) -> int:
    """The table's size: ``stated``, or the namespace's; either way every id of the namespace must fit."""
    size = vocab.get_vocab_size(namespace)
    if not size:
        raise ValueError(f'the vocabulary has no namespace "{namespace}" to size this embedding by (it has: '
                         f"{', '.join(sorted(vocab.get_namespaces())) or 'none'})")
    if stated is not None and stated < size:
        raise ValueError(f'num_embeddings is {stated}, but namespace "{namespace}" of the vocabulary has {size} '
                         "entries; leave num_embeddings out to take that size")
    return size if stated is None else stated


#: the extensions of an HDF5 vectors file (AllenNLP's): its ``embedding`` dataset is the whole matrix, row by id
HDF5_EXTENSIONS = (".h5", ".hdf5")


def read_hdf5_vectors(path: str, vocab: Any, namespace: str, dim: int) -> torch.Tensor:
    """The ``embedding`` dataset of an HDF5 file, one row per id of ``namespace`` in the vocabulary's order (as
    AllenNLP wrote and read them); a matrix of any other shape is a ValueError."""
    try:
        import h5py
    except ImportError:
        raise ImportError("reading an HDF5 vectors file needs h5py: pip install h5py") from None
    with h5py.File(path, "r") as weights:
        matrix = torch.from_numpy(weights["embedding"][...]).float()
    expected = (vocab.get_vocab_size(namespace), dim)
    if tuple(matrix.shape) != expected:
        raise ValueError(f"pretrained_file {path}: its embedding matrix is {tuple(matrix.shape)}, the vocabulary's "
                         f"namespace {namespace!r} and embedding_dim need {expected}")
    return matrix


def read_vectors(path: str, vocab: Any, namespace: str, dim: int) -> torch.Tensor:
    """A (vocabulary size, ``dim``) matrix: the file's vector for each token it has, random for the rest.

    Lines are ``token v1 ... v_dim``; a word2vec header (``count dim``) and lines of another width are
    skipped. Only lines whose token is in ``namespace`` are parsed. An ``.h5``/``.hdf5`` file is the whole
    matrix (:func:`read_hdf5_vectors`)."""
    if str(path).lower().endswith(HDF5_EXTENSIONS):
        return read_hdf5_vectors(path, vocab, namespace, dim)
    wanted = vocab.get_token_to_index_vocabulary(namespace)
    found: dict[int, torch.Tensor] = {}
    with EmbeddingsTextFile(str(path)) as lines:
        for line in lines:
            token, _, rest = line.rstrip("\n").partition(" ")
            index = wanted.get(token)
            if index is None:
                continue
            values = rest.rstrip().split(" ")
            if len(values) != dim:
                logger.warning("%s: %r has %d values, not %d; skipped", path, token, len(values), dim)
                continue
            found[index] = torch.tensor([float(value) for value in values])
    if not found:
        raise ValueError(f"pretrained_file {path} has no {dim}-wide vector for any token of namespace {namespace!r}")
    loaded = torch.stack(list(found.values()))
    std = float(loaded.std()) if loaded.numel() > 1 else 1.0
    matrix = torch.empty(vocab.get_vocab_size(namespace), dim).normal_(float(loaded.mean()), std)
    for index, vector in found.items():
        matrix[index] = vector
    logger.info("%s: pretrained vectors for %d of %d %r tokens", path, len(found), len(wanted), namespace)
    return matrix
