"""AllenNLP's transformer toolkit (``allennlp.modules.transformer``) beyond what AllenNLP's own tests check offline:
that it loads only on a user's import, and that ``from_pretrained_module`` reads a local Hugging Face folder (its
config and weights, the relevant submodule, the renaming) into modules that compute what the Hugging Face model
computes. AllenNLP's tests of that path all download models from the hub."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

transformers = pytest.importorskip("transformers")


def test_the_toolkit_loads_through_the_hook_and_not_with_the_builtins():
    code = ("import sys, distrain.plugins as p; p.import_builtins(); "
            "print('distrain.allennlp.modules.transformer' in sys.modules); "
            "import allennlp.modules.transformer as t, distrain.allennlp.modules.transformer as d; print(t is d)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    config = transformers.BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=16, max_position_embeddings=12, hidden_dropout_prob=0.0,
                                     attention_probs_dropout_prob=0.0, attn_implementation="eager")
    torch.manual_seed(3)
    model = transformers.BertModel(config).eval()
    folder = tmp_path_factory.mktemp("bert")
    model.save_pretrained(folder)
    return folder, model


def test_a_local_bert_loads_into_embeddings_stack_and_pooler_that_compute_what_it_computes(bert_folder):
    from allennlp.modules.transformer import TransformerEmbeddings, TransformerPooler, TransformerStack

    folder, bert = bert_folder
    embeddings = TransformerEmbeddings.from_pretrained_module(str(folder)).eval()
    stack = TransformerStack.from_pretrained_module(str(folder)).eval()
    pooler = TransformerPooler.from_pretrained_module(str(folder)).eval()
    ids = torch.tensor([[2, 5, 7, 9, 0], [3, 4, 0, 0, 0]])
    mask = ids != 0
    expected = bert(input_ids=ids, attention_mask=mask.long())
    states = stack(embeddings(ids), attention_mask=mask).final_hidden_states
    assert torch.allclose(states[mask], expected.last_hidden_state[mask], atol=1e-5)
    assert torch.allclose(pooler(states), expected.pooler_output, atol=1e-5)


def test_fewer_layers_than_the_checkpoint_load_only_when_not_strict(bert_folder):
    from allennlp.modules.transformer import TransformerStack

    folder, bert = bert_folder
    with pytest.raises(RuntimeError, match="unexpected keys"):
        TransformerStack.from_pretrained_module(str(folder), num_hidden_layers=1)
    stack = TransformerStack.from_pretrained_module(str(folder), num_hidden_layers=1, strict=False)
    assert torch.equal(stack.layers[0].intermediate.dense.weight, bert.encoder.layer[0].intermediate.dense.weight)


def test_cached_transformers_hands_out_one_model_or_copies_of_it(bert_folder):
    from allennlp.common import cached_transformers

    folder, _ = bert_folder
    try:
        first = cached_transformers.get(str(folder), make_copy=False)
        assert cached_transformers.get(str(folder), make_copy=False) is first
        copy = cached_transformers.get(str(folder), make_copy=True)
        assert copy is not first and torch.equal(copy.embeddings.word_embeddings.weight,
                                                 first.embeddings.word_embeddings.weight)
    finally:
        cached_transformers._clear_caches()


def test_a_local_t5_loads_and_its_loss_and_cached_decoding_match_the_hugging_face_model(tmp_path):
    from allennlp.modules.transformer.t5 import T5

    config = transformers.T5Config(vocab_size=40, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4,
                                   relative_attention_num_buckets=8, dropout_rate=0.0, decoder_start_token_id=0,
                                   pad_token_id=0, eos_token_id=1)
    torch.manual_seed(5)
    reference = transformers.T5ForConditionalGeneration(config).eval()
    reference.save_pretrained(tmp_path)
    model = T5.from_pretrained_module(str(tmp_path)).eval()
    model.beam_search.max_steps = 3
    ids = torch.tensor([[5, 6, 7, 1], [9, 1, 0, 0]])
    labels = torch.tensor([[11, 12, 1], [13, 1, 0]])
    out = model(ids, labels=labels)
    expected = reference(input_ids=ids, attention_mask=ids != 0, labels=labels, decoder_attention_mask=labels != 0)
    assert torch.allclose(out.loss, expected.loss, atol=1e-5)
    assert out.predictions.shape == (2, 3, 3)
    # decoding a step at a time with the decoder's cache gives the distributions of one pass over the same inputs
    forced = model._shift_right(labels, 0)
    logits = reference(input_ids=ids, attention_mask=ids != 0, decoder_input_ids=forced).logits
    state = {"encoder_hidden_states": out.encoder_last_hidden_state, "encoder_attention_mask": ids != 0}
    for step in range(3):
        log_probabilities, state = model.take_search_step(forced[:, step], state, step)
        assert torch.allclose(log_probabilities, torch.log_softmax(logits[:, step], -1), atol=1e-5)
