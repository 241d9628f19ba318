"""AllenNLP's modules under their registered names, against AllenNLP 2.10.1 itself: each case of the golden files
(made by tests/allennlp_oracle/module_outputs.py) is built from its config by distrain's registry, given AllenNLP's
parameters through the module's name map, and must give AllenNLP's output."""

from __future__ import annotations

import json

import pytest
import torch

from support.paths import TESTS
from distrain.config.errors import Problem
from distrain.config.schema import resolve_object
from distrain.modules.attention import Attention
from distrain.modules.highway import Highway
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.span_extractor import SpanExtractor
from distrain.modules.time_distributed import TimeDistributed
from distrain.plugins import import_builtins

import_builtins()

GOLDEN = TESTS / "allennlp_golden" / "modules"


def golden(name: str) -> list[dict]:
    return json.loads((GOLDEN / f"{name}.json").read_text())["cases"]


def tensor(value: dict) -> torch.Tensor:
    return torch.tensor(value["values"], dtype=getattr(torch, value["dtype"]))


def built(base: type, config: dict, **runtime) -> torch.nn.Module:
    problems: list[Problem] = []
    node = resolve_object(base, config, "block", problems)
    assert not problems, problems
    return node.construct(**runtime)


def allennlps_difference(base: type, case: dict, **runtime) -> float:
    """Max |distrain's output - AllenNLP's| for a golden case, with AllenNLP's parameters loaded by name."""
    module = built(base, case["config"], **runtime)
    state = {module.allennlp_name(name): tensor(value) for name, value in case["parameters"].items()}
    module.load_state_dict(state, strict=True)
    module.eval()
    with torch.no_grad():
        output = module(**{name: tensor(value) for name, value in case["inputs"].items()}) \
            if "arg0" not in case["inputs"] else module(*[tensor(value) for value in case["inputs"].values()])
    expected = tensor(case["output"])
    assert output.shape == expected.shape
    return float((output - expected).abs().max())


def case_id(case: dict) -> str:
    return ",".join(f"{key}={value}" for key, value in case["config"].items())


@pytest.mark.parametrize("case", golden("matrix_attentions"), ids=case_id)
def test_matrix_attentions_give_allennlps_scores(case):
    assert allennlps_difference(MatrixAttention, case) < 1e-6


@pytest.mark.parametrize("case", golden("attentions"), ids=case_id)
def test_attentions_give_allennlps_weights(case):
    assert allennlps_difference(Attention, case) < 1e-6


def test_a_bad_combination_is_a_config_problem_with_its_key_path():
    problems: list[Problem] = []
    resolve_object(MatrixAttention, {"type": "linear", "tensor_1_dim": 3, "tensor_2_dim": 3, "combination": "x,y,x%y"},
                   "model.attention", problems)
    assert [str(p) for p in problems] == [
        'model.attention.combination: must be pieces like "x", "y", "x*y", "x-y" (operations * / + -) joined by commas'
        ', got "x,y,x%y"']


@pytest.mark.parametrize("case", golden("seq2seq_encoders"), ids=case_id)
def test_stacked_bidirectional_and_alternating_lstms_give_allennlps_outputs(case):
    assert allennlps_difference(Seq2SeqEncoder, case) < 1e-6


@pytest.mark.parametrize("name", ["stacked_bidirectional_lstm", "alternating_lstm"])
def test_the_augmented_lstms_drop_out_only_while_training_and_keep_padding_zero(name):
    encoder = built(Seq2SeqEncoder, {"type": name, "input_size": 3, "hidden_size": 2, "num_layers": 2,
                                     "recurrent_dropout_probability": 0.5})
    inputs, mask = torch.randn(2, 4, 3), torch.tensor([[True] * 4, [True, True, False, False]])
    encoder.train()
    torch.manual_seed(0)
    first = encoder(inputs, mask)
    torch.manual_seed(1)
    assert not torch.equal(first, encoder(inputs, mask))
    assert first[1, 2:].abs().max() == 0
    encoder.eval()
    assert torch.equal(encoder(inputs, mask), encoder(inputs, mask))


@pytest.mark.parametrize("case", golden("span_extractors"), ids=case_id)
def test_span_extractors_give_allennlps_span_vectors(case):
    assert allennlps_difference(SpanExtractor, case) < 1e-6


def test_span_extractors_say_their_output_width():
    for case in golden("span_extractors"):
        assert built(SpanExtractor, case["config"]).get_output_dim() == len(case["output"]["values"][0][0])


def test_a_half_given_width_embedding_and_an_odd_bidirectional_width_are_config_problems():
    problems: list[Problem] = []
    resolve_object(SpanExtractor, {"type": "bidirectional_endpoint", "input_dim": 5, "num_width_embeddings": 4},
                   "model.span_extractor", problems)
    assert [str(p) for p in problems] == [
        "model.span_extractor.num_width_embeddings: needs span_width_embedding_dim too (a span width embedding takes both)",
        "model.span_extractor.input_dim: must be even (a forward and a backward half), got 5"]


class SumAndFirst(torch.nn.Module):
    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return inputs[:, 0], inputs.sum(1)


def test_time_distributed_gives_allennlps_output_and_unfolds_tuples():
    (case,) = golden("time_distributed")
    module = TimeDistributed(torch.nn.Linear(**case["config"]))
    module.load_state_dict({module.allennlp_name(name): tensor(value) for name, value in case["parameters"].items()})
    inputs = tensor(case["inputs"]["arg0"])
    with torch.no_grad():
        assert float((module(inputs) - tensor(case["output"])).abs().max()) < 1e-6
    first, total = TimeDistributed(SumAndFirst())(inputs)
    assert torch.equal(first, inputs[:, :, 0]) and torch.equal(total, inputs.sum(2))
    with pytest.raises(RuntimeError, match="no time dimension"):
        module(torch.zeros(2, 4))


@pytest.mark.parametrize("case", golden("highway"), ids=case_id)
def test_highway_gives_allennlps_output(case):
    module = Highway(**case["config"])
    module.load_state_dict({name.lstrip("_"): tensor(value) for name, value in case["parameters"].items()})
    with torch.no_grad():
        assert float((module(tensor(case["inputs"]["arg0"])) - tensor(case["output"])).abs().max()) < 1e-6
