"""The names AllenNLP readers and models are written against, in one place.

A reader or model written for AllenNLP runs on distrain with only its imports changed::

    from allennlp.data import DatasetReader, Instance        ->  from distrain.allennlp import DatasetReader, Instance
    from allennlp.data.fields import LabelField, TextField   ->  from distrain.allennlp import LabelField, TextField
    from allennlp.models import Model                        ->  from distrain.allennlp import Model
    from allennlp.nn import util                             ->  from distrain.allennlp import util

Everything here is distrain's own class under AllenNLP's name (no copies, no wrappers), so such
components register in distrain's registries and take part in validation, caching and distribution
like built-in ones. ``WhitespaceTokenizer`` is AllenNLP's (``whitespace`` or ``just_spaces``: split on spaces, keep case);
``ConfigurationError`` is distrain's one-line config error.

For prediction, as an AllenNLP predictor is written: ``Predictor`` (with
``predict_json``, ``predict_instance``, ``_json_to_instance``, ``from_path``, ``from_archive``), ``JsonDict``,
``sanitize`` and ``load_archive`` (see :mod:`distrain.allennlp.predictor`).
"""

from __future__ import annotations

from distrain.allennlp import util
from distrain.allennlp.common.from_params import attach as _attach_from_params
from distrain.allennlp.archival import Archive, load_archive
from distrain.allennlp.predictor import Predictor
from distrain.allennlp.sanitize import JsonDict, sanitize
from distrain.config.errors import ConfigError as ConfigurationError
from distrain.config.lazy import Lazy
from distrain.allennlp.data.dataset_readers.dataset_reader import DatasetReader
from distrain.allennlp.data.fields import (ArrayField, Field, LabelField, MetadataField, SequenceLabelField,
                                           TensorField, TextField)
from distrain.allennlp.data.instance import Instance
from distrain.data.token_indexer import TokenIndexer
from distrain.allennlp.data.token_indexers.token_characters_indexer import TokenCharactersIndexer
from distrain.data.token_indexers.pretrained_transformer import PretrainedTransformerIndexer
from distrain.data.token_indexers.pretrained_transformer_mismatched import PretrainedTransformerMismatchedIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.data.tokenizers.character import CharacterTokenizer
from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer
from distrain.data.tokenizers.letters_digits import LettersDigitsTokenizer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer
from distrain.allennlp.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.models.model import Model
from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.seq2vec_encoders.bag_of_embeddings import BagOfEmbeddingsEncoder
from distrain.modules.seq2vec_encoders.cnn import CnnEncoder
from distrain.modules.text_field_embedder import BasicTextFieldEmbedder, TextFieldEmbedder, TextFieldTensors
from distrain.modules.token_embedder import TokenEmbedder
from distrain.modules.token_embedders.embedding import Embedding
from distrain.registry import Registrable

_attach_from_params()  # AllenNLP's Registrable.from_params, for the code written against it

#: the boundary tokens AllenNLP's sequence-to-sequence readers and models add
START_SYMBOL = "@start@"
END_SYMBOL = "@end@"

__all__ = [
    "Archive", "ArrayField", "BagOfEmbeddingsEncoder", "BasicTextFieldEmbedder", "CategoricalAccuracy",
    "CharacterTokenizer", "CnnEncoder", "ConfigurationError", "DatasetReader", "END_SYMBOL", "Embedding",
    "FeedForward", "Field", "Instance", "JsonDict", "LabelField", "LettersDigitsTokenizer", "Lazy", "MetadataField",
    "Metric", "Model", "Predictor", "PretrainedTransformerIndexer", "PretrainedTransformerMismatchedIndexer",
    "PretrainedTransformerTokenizer", "Registrable", "START_SYMBOL", "Seq2SeqEncoder", "Seq2VecEncoder",
    "SequenceLabelField", "SingleIdTokenIndexer", "SpacyTokenizer", "TensorField", "TextField", "TextFieldEmbedder",
    "TextFieldTensors", "Token", "TokenCharactersIndexer", "TokenEmbedder", "TokenIndexer", "Tokenizer",
    "Vocabulary", "WhitespaceTokenizer", "load_archive", "sanitize", "util",
]
