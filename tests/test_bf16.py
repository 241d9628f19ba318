"""bfloat16 training (issue 41): the causal LM's chunked loss (``model.loss_chunk_size``) against its plain
loss, and the trainer's precision modes through the config and the CLI."""

from __future__ import annotations

import pytest
import torch

from distrain.data.vocabulary import Vocabulary
from distrain.models.causal_language_model import CausalLanguageModel

LLAMA = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "vocab_size": 97,
         "tie_word_embeddings": True}


def twin_models(**chunked):
    torch.manual_seed(0)
    plain = CausalLanguageModel(Vocabulary(), config=LLAMA)
    fused = CausalLanguageModel(Vocabulary(), config=LLAMA, **chunked)
    fused.load_state_dict(plain.state_dict())
    return plain, fused


def batch():
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 97, (3, 12), generator=generator)
    labels = ids.clone()
    labels[0, :5] = -100  # a prompt
    return ids, labels


def test_the_chunked_loss_gives_the_plain_loss_metrics_weight_and_gradients():
    plain, fused = twin_models(loss_chunk_size=5)
    ids, labels = batch()
    outputs = [model(input_ids=ids, labels=labels) for model in (plain, fused)]
    for output in outputs:
        (output["loss"] * 0.5).backward()
    torch.testing.assert_close(outputs[1]["loss"], outputs[0]["loss"], rtol=1e-6, atol=1e-6)
    assert int(outputs[1]["loss_weight"]) == int(outputs[0]["loss_weight"]) == 3 * 11 - 4  # labels 1..4 of the first row are the prompt
    assert fused.get_metrics(reset=True) == pytest.approx(plain.get_metrics(reset=True), rel=1e-6)
    gradients = dict(plain.named_parameters())
    for name, parameter in fused.named_parameters():
        torch.testing.assert_close(parameter.grad, gradients[name].grad, rtol=1e-4, atol=1e-6, msg=name)
    with torch.no_grad():  # evaluation: the same loss without gradients; no labels: the logits
        assert float(fused(input_ids=ids, labels=labels)["loss"]) == pytest.approx(float(outputs[0]["loss"]), rel=1e-6)
        assert fused(input_ids=ids)["logits"].shape == (3, 12, 97)


def test_the_chunked_loss_under_autocast_stays_within_bfloat16_of_the_plain_loss():
    plain, fused = twin_models(loss_chunk_size=8)
    ids, labels = batch()
    with torch.autocast("cpu", torch.bfloat16):
        expected, got = (model(input_ids=ids, labels=labels)["loss"] for model in (plain, fused))
    assert float(got.detach()) == pytest.approx(float(expected.detach()), rel=1e-2)


def test_an_output_layer_the_chunked_loss_cannot_compute_is_refused_by_key():
    from distrain.config.errors import ConfigError

    with pytest.raises(ConfigError, match="model.loss_chunk_size") as refused:
        CausalLanguageModel(Vocabulary(), config={**LLAMA, "model_type": "gemma2", "head_dim": 8,
                                                  "final_logit_softcapping": 30.0}, loss_chunk_size=8)
    assert "final_logit_softcapping" in str(refused.value)
