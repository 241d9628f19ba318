"""The weighted CRFs against brute force over every tag sequence, and the smaller modules AllenNLP users call
(``max_pooling`` spans, ``bag_of_word_counts``, ``pass_through``, the ``feedforward`` and ``compose`` encoders,
``MaskedLayerNorm``), the archive-aware vectors file and the sentence splitter, by hand-worked cases."""

from __future__ import annotations

import gzip
import itertools
import math
import tarfile
import zipfile

import pytest
import torch

from distrain.modules.feedforward import FeedForward
from distrain.modules.layer_norm import MaskedLayerNorm
from distrain.modules.seq2seq_encoders.compose import ComposeEncoder
from distrain.modules.seq2seq_encoders.feedforward import FeedForwardEncoder
from distrain.modules.span_extractors.max_pooling import MaxPoolingSpanExtractor
from distrain.modules.token_embedders.bag_of_word_counts import BagOfWordCountsTokenEmbedder
from distrain.modules.token_embedders.embedding import embedding_file_words
from distrain.modules.token_embedders.embeddings_text_file import EmbeddingsTextFile, format_embeddings_file_uri
from distrain.zoo.tagging.modules.weighted_conditional_random_field import WeightedConditionalRandomField
from distrain.data.vocabulary import Vocabulary


def brute_force(crf: WeightedConditionalRandomField, logits: torch.Tensor, tags: torch.Tensor) -> float:
    """log p(tags) by enumerating every sequence, with the strategy's weighting written out by hand."""
    weights, transitions = crf.label_weights, crf.transitions.detach()
    weigh_moves = crf.weight_strategy in ("emission_transition", "lannoy")

    def score(sequence, weighted=True):
        total = crf.start_transitions[sequence[0]] + crf.end_transitions[sequence[-1]]
        for a, b in zip(sequence, sequence[1:]):
            total = total + transitions[a, b] * (weights[a] if weighted and weigh_moves else 1.0)
        for position, tag in enumerate(sequence):
            total = total + logits[position, tag] * (weights[tag] if weighted else 1.0)
        return float(total)

    gold = score(list(tags))
    if crf.weight_strategy != "lannoy":
        return gold - math.log(sum(math.exp(score(s)) for s in itertools.product(range(crf.num_tags), repeat=len(tags))))
    # Lannoy: each prefix's normaliser (of the forward recursion scaled to one) weighted by the gold tag there
    alpha = crf.start_transitions.detach() + logits[0]
    partition = float(torch.logsumexp(alpha, 0)) * float(weights[tags[0]])
    alpha = alpha - torch.logsumexp(alpha, 0)
    for position in range(1, len(tags)):
        alpha = torch.logsumexp(alpha.unsqueeze(1) + transitions + logits[position].unsqueeze(0), 0)
        partition += float(torch.logsumexp(alpha, 0)) * float(weights[tags[position]])
        alpha = alpha - torch.logsumexp(alpha, 0)
    partition += float(torch.logsumexp(alpha + crf.end_transitions.detach(), 0))
    return gold - partition


@pytest.mark.parametrize("strategy", ["emission", "emission_transition", "lannoy"])
def test_weighted_crfs_match_brute_force(strategy):
    torch.manual_seed(0)
    crf = WeightedConditionalRandomField(4, [1.0, 0.5, 2.0, 0.7], strategy)
    logits, tags = torch.randn(2, 3, 4), torch.tensor([[0, 2, 3], [1, 1, 0]])
    mask = torch.tensor([[True, True, True], [True, True, False]])
    expected = [brute_force(crf, logits[0].detach(), tags[0]), brute_force(crf, logits[1, :2].detach(), tags[1, :2])]
    assert crf(logits, tags, mask).tolist() == pytest.approx(expected, abs=1e-5)


def test_max_pooling_takes_the_visible_maximum_and_refuses_bad_spans():
    sequence = torch.tensor([[[1.0, 5.0], [3.0, 2.0], [9.0, 9.0]]])
    extractor = MaxPoolingSpanExtractor(2)
    spans = torch.tensor([[[0, 1], [2, 2], [0, 2]]])
    assert extractor(sequence, spans).tolist() == [[[3.0, 5.0], [9.0, 9.0], [9.0, 9.0]]]
    hidden_last = torch.tensor([[True, True, False]])
    assert extractor(sequence, spans[:, :1], sequence_mask=hidden_last).tolist() == [[[3.0, 5.0]]]
    assert extractor(sequence, spans, span_indices_mask=torch.tensor([[True, False, True]]))[0, 1].tolist() == [0, 0]
    for bad in ([[[1, 0]]], [[[0, 3]]], [[[2, 2]]]):
        with pytest.raises(IndexError):
            extractor(sequence, torch.tensor(bad), sequence_mask=hidden_last)
    with pytest.raises(ValueError):
        MaxPoolingSpanExtractor(3)(sequence, spans)


def test_word_counts_pass_through_and_the_two_encoders():
    vocab = Vocabulary({"tokens": ["@@PADDING@@", "@@UNKNOWN@@", "a", "b"]})
    counts = BagOfWordCountsTokenEmbedder(vocab, ignore_oov=True)(torch.tensor([[2, 2, 1, 0], [3, 0, 0, 0]]))
    assert counts.tolist() == [[0, 0, 2, 0], [0, 0, 0, 1]]
    first = FeedForwardEncoder(FeedForward(4, input_dim=3, num_layers=1, activation="linear"))
    second = FeedForwardEncoder(FeedForward(2, input_dim=4, num_layers=1, activation="linear"))
    inputs, mask = torch.randn(2, 3, 3), torch.tensor([[True, True, False], [True, False, False]])
    composed = ComposeEncoder([first, second])
    assert composed.get_input_dim() == 3 and composed.get_output_dim() == 2
    assert torch.allclose(composed(inputs, mask), second(first(inputs, mask), mask))
    assert composed(inputs, mask)[0, 2].abs().sum() == 0
    with pytest.raises(ValueError):
        ComposeEncoder([second, first])


def test_masked_layer_norm_counts_only_unmasked_elements():
    tensor, mask = torch.rand(2, 3, 4), torch.tensor([[True, True, False], [True, False, False]])
    kept = tensor[mask]
    expected = 0.5 * (tensor - kept.mean()) / (kept.std(unbiased=False) + 1e-13)
    assert torch.allclose(MaskedLayerNorm(4, gamma0=0.5)(tensor, mask), expected, atol=1e-5)


def test_vectors_are_read_from_archives_and_compressed_files(tmp_path):
    text = "3 2\nthe 0.1 0.2\ncat 0.3 0.4\nsat 0.5 0.6\n"
    plain = tmp_path / "vectors.txt"
    plain.write_text(text)
    with gzip.open(tmp_path / "vectors.txt.gz", "wt") as handle:
        handle.write(text)
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as archive:
        archive.writestr("folder/vectors.txt", text)
        archive.writestr("other.txt", "dog 1 1\n")
    with tarfile.open(tmp_path / "one.tar.gz", "w:gz") as archive:
        archive.add(plain, arcname="vectors.txt")
    for uri in (plain, tmp_path / "vectors.txt.gz", format_embeddings_file_uri(str(tmp_path / "two.zip"),
                                                                                "folder/vectors.txt"),
                tmp_path / "one.tar.gz"):
        assert embedding_file_words(str(uri)) == {"the", "cat", "sat"}
    with EmbeddingsTextFile(str(plain)) as lines:
        assert lines.num_tokens == 3 and next(lines) == "the 0.1 0.2\n"
    with pytest.raises(ValueError, match="contains multiple files"):
        EmbeddingsTextFile(str(tmp_path / "two.zip"))


def test_the_rule_based_sentence_splitter():
    from distrain.data.sentence_splitters.spacy import SpacySentenceSplitter

    splitter = SpacySentenceSplitter(rule_based=True)
    assert splitter.split_sentences("One sentence here. And another one! ") == ["One sentence here.", "And another one!"]
    assert splitter.batch_split_sentences(["This is one. That is two.", "Three."]) == [
        ["This is one.", "That is two."], ["Three."]]


def test_the_gated_cnn_reads_each_side_only_in_its_own_half():
    from distrain.modules.seq2seq_encoders.gated_cnn import GatedCnnEncoder

    torch.manual_seed(0)
    encoder = GatedCnnEncoder(8, [[[3, 8]], [[2, 4, 2], [1, 8]]], return_all_layers=True)
    inputs, mask = torch.rand(1, 9, 8), torch.ones(1, 9, dtype=torch.bool)
    changed = inputs.clone()
    changed[0, 5:] += 1.0
    before, after = encoder(inputs, mask)[-1], encoder(changed, mask)[-1]
    assert before.shape == (1, 9, 16) and len(encoder(inputs, mask)) == 2
    assert torch.allclose(before[0, :5, :8], after[0, :5, :8])  # left to right: the change lies ahead
    assert not torch.allclose(before[0, :5, 8:], after[0, :5, 8:])  # right to left sees it
    with pytest.raises(ValueError):
        GatedCnnEncoder(8, [[[3, 4]]])
