"""AllenNLP's optimizers, schedules, initializers and regularizers: its formulas, checked against
transcriptions of AllenNLP's own code (allennlp/training/learning_rate_schedulers/*.py at its last
commit) and hand-computed values."""

from __future__ import annotations

import json

import pytest
import torch

from distrain.config.errors import Problem
from distrain.config.schema import resolve_object
from distrain.optim.initializers import InitializerApplicator
from distrain.optim.optimizers import Optimizer
from distrain.optim.regularizers import RegularizerApplicator
from distrain.optim.schedulers import LearningRateScheduler
from distrain.plugins import import_builtins
from support.paths import TESTS

import_builtins()


def built(base: type, config, **runtime):
    problems: list[Problem] = []
    node = resolve_object(base, config, "block", problems)
    assert not problems, problems
    return node.construct(**runtime)


def optimizer(groups: int = 1, lr: float = 1.0) -> torch.optim.Optimizer:
    return torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(1))]} for _ in range(groups)], lr=lr)


def distrain_rates(scheduler, epochs: int, steps: int) -> list[list[float]]:
    """The rate of every optimizer step, driven as the trainer drives it."""
    rates = []
    for _ in range(epochs):
        for _ in range(steps):
            rates.append([group["lr"] for group in scheduler.optimizer.param_groups])
            scheduler.step()
        scheduler.step_epoch(None)
    return rates


class AllenNlpSlantedTriangular:
    """AllenNLP's SlantedTriangular (no unfreezing), as its trainer calls it: ``step()`` once at
    construction and after each epoch, ``step_batch(n)`` before optimizer step ``n``."""

    def __init__(self, base, num_epochs, num_steps_per_epoch, cut_frac=0.1, ratio=32, decay_factor=None):
        self.base, self.num_epochs, self.num_steps_per_epoch = list(base), num_epochs, num_steps_per_epoch
        self.cut_frac, self.ratio, self.ends, self.last = cut_frac, ratio, [], -1
        self.step()
        if decay_factor is not None:
            self.base = [b * decay_factor ** (len(self.base) - 1 - i) for i, b in enumerate(self.base)]

    def step(self):
        self.ends.append(0 if not self.ends else self.last)

    def values(self, batch_num_total):
        self.last = batch_num_total
        if len(self.ends) > 1:
            actual = int(self.ends[-1] / (len(self.ends) - 1))
        else:
            actual = max(self.num_steps_per_epoch or 1, self.last)
        num_steps = self.num_epochs * actual
        step = min(self.last, num_steps)
        cut = int(num_steps * self.cut_frac)
        prop = step / cut if step < cut else 1 - (step - cut) / (num_steps - cut)
        return [lr * (1 + prop * (self.ratio - 1)) / self.ratio for lr in self.base]

    def rates(self, epochs, steps):
        rates, total = [], 0
        for _ in range(epochs):
            for _ in range(steps):
                rates.append(self.values(total + 1))
                total += 1
            self.step()
        return rates


def test_slanted_triangular_follows_allennlp_including_a_wrong_steps_per_epoch_estimate():
    # the config says 5 steps per epoch, the data gives 4: AllenNLP corrects itself after epoch 1
    scheduler = built(LearningRateScheduler, {"type": "slanted_triangular", "num_steps_per_epoch": 5,
                                              "cut_frac": 0.3, "ratio": 10, "discriminative_fine_tuning": True},
                      optimizer=optimizer(groups=2, lr=0.5), num_training_steps=12, trainer_epochs=3,
                      trainer_steps_per_epoch=4)
    reference = AllenNlpSlantedTriangular([0.5, 0.5], 3, 5, cut_frac=0.3, ratio=10, decay_factor=0.38)
    got, expected = distrain_rates(scheduler, 3, 4), reference.rates(3, 4)
    assert sum(got, []) == pytest.approx(sum(expected, []), abs=1e-12)
    assert got[0][0] == pytest.approx(0.38 * got[0][1])  # discriminative: the earlier group decays once more


def test_slanted_triangular_hand_computed_values():
    scheduler = built(LearningRateScheduler, "slanted_triangular", optimizer=optimizer(lr=1.0),
                      num_training_steps=20, trainer_epochs=2, trainer_steps_per_epoch=10)
    rates = [rate for (rate,) in distrain_rates(scheduler, 2, 10)]
    # 20 steps, cut at 2: up from 1/32 to the base by step 2, then down to 1/32 at step 20
    assert rates[0] == pytest.approx(16.5 / 32)
    assert rates[1] == pytest.approx(1.0)
    assert rates[19] == pytest.approx(1 / 32)


def test_slanted_triangular_resumes_from_its_state():
    def fresh():
        return built(LearningRateScheduler, {"type": "slanted_triangular", "num_steps_per_epoch": 7},
                     optimizer=optimizer(), num_training_steps=15, trainer_epochs=3, trainer_steps_per_epoch=5)
    whole = distrain_rates(fresh(), 3, 5)
    first = fresh()
    distrain_rates(first, 1, 5)
    second = fresh()
    second.load_state_dict(first.state_dict())
    assert distrain_rates(second, 2, 5) == whole[5:]


def allennlp_polynomial_decay(base, total, warmup, power, end, steps):
    """AllenNLP's PolynomialDecay.get_values for ``steps`` = 1, 2, ... (step_batch(n) before step n)."""
    values = []
    for n in range(1, steps + 1):
        if warmup > 0 and n < warmup:
            values.append(n / warmup * base)
        elif n >= total:
            values.append(end)
        else:
            values.append(((total - n) / (total - warmup)) ** power * (base - end) + end)
    return values


def test_polynomial_decay_follows_allennlp():
    scheduler = built(LearningRateScheduler, {"type": "polynomial_decay", "warmup_steps": 2, "power": 2.0,
                                              "end_learning_rate": 0.1}, optimizer=optimizer(lr=1.0),
                      num_training_steps=10)
    rates = [rate for (rate,) in distrain_rates(scheduler, 2, 5)]
    assert rates == pytest.approx(allennlp_polynomial_decay(1.0, 10, 2, 2.0, 0.1, 10))
    assert rates[0] == pytest.approx(0.5) and rates[5] == pytest.approx(0.325) and rates[9] == pytest.approx(0.1)


def test_linear_with_warmup_is_allennlps_polynomial_decay_with_100_warmup_steps():
    scheduler = built(LearningRateScheduler, "linear_with_warmup", optimizer=optimizer(lr=1.0), num_training_steps=300)
    rates = [rate for (rate,) in distrain_rates(scheduler, 3, 100)]
    assert rates == pytest.approx(allennlp_polynomial_decay(1.0, 300, 100, 1.0, 0.0, 300))
    assert rates[98] == pytest.approx(0.99) and rates[99] == pytest.approx(1.0) and rates[199] == pytest.approx(0.5)


def model_parameters() -> list[tuple[str, torch.nn.Parameter]]:
    torch.manual_seed(0)
    return list(torch.nn.Linear(3, 2).named_parameters())


@pytest.mark.parametrize("name,torch_class,defaults", [
    ("huggingface_adamw", torch.optim.AdamW, {"lr": 1e-5, "weight_decay": 0.0, "eps": 1e-8}),
    ("adadelta", torch.optim.Adadelta, {"lr": 1.0, "rho": 0.9, "eps": 1e-6}),
    ("adagrad", torch.optim.Adagrad, {"lr": 0.01, "eps": 1e-10, "initial_accumulator_value": 0.0}),
])
def test_allennlp_optimizers_by_bare_name_have_allennlp_defaults(name, torch_class, defaults):
    built_optimizer = built(Optimizer, name, model_parameters=model_parameters())
    assert isinstance(built_optimizer, torch_class)
    for key, value in defaults.items():
        assert built_optimizer.param_groups[0][key] == value, key


def huggingface_adamw_steps(correct_bias: bool) -> tuple[list[float], list[float]]:
    """Four steps of fixed gradients (float64) in distrain, and where AllenNLP 2.10.1's ``huggingface_adamw`` ended
    (tests/allennlp_oracle/optimizer_steps.py), flattened."""
    golden = json.loads((TESTS / "allennlp_golden" / "optimizer_steps.json").read_text())
    parameter = torch.nn.Parameter(torch.tensor(golden["start"], dtype=torch.float64))
    built_optimizer = built(Optimizer, {"type": "huggingface_adamw", "correct_bias": correct_bias, **golden["options"]},
                            model_parameters=[("weight", parameter)])
    for gradient in golden["gradients"]:
        parameter.grad = torch.tensor(gradient, dtype=torch.float64)
        built_optimizer.step()
    expected = golden["correct_bias" if correct_bias else "no_bias_correction"][-1]
    return parameter.detach().flatten().tolist(), sum(expected, [])


def test_huggingface_adamw_without_bias_correction_takes_transformers_steps():
    mine, allennlps = huggingface_adamw_steps(correct_bias=False)
    assert mine == pytest.approx(allennlps, abs=1e-12)


def test_huggingface_adamw_with_bias_correction_is_torchs_adamw_close_to_transformers():
    """torch's kernel: it decays the weights before the update (transformers' after) and adds ``eps`` to the
    corrected root; at lr 0.05, weight decay 0.01 and eps 1e-6 that is 6.1e-5 after four steps."""
    mine, allennlps = huggingface_adamw_steps(correct_bias=True)
    worst = max(abs(a - b) for a, b in zip(mine, allennlps))
    assert worst < 1e-4, worst


def test_huggingface_adafactor_takes_allennlps_steps():
    """transformers' Adafactor with AllenNLP's defaults (its own step size, no ``lr``): a factored matrix and a
    vector after four steps (tests/allennlp_oracle/optimizer_steps.py)."""
    golden = json.loads((TESTS / "allennlp_golden" / "optimizer_steps.json").read_text())
    matrix = torch.nn.Parameter(torch.tensor(golden["start"]))
    vector = torch.nn.Parameter(torch.tensor(golden["start"][0]))
    built_optimizer = built(Optimizer, {"type": "huggingface_adafactor"},
                            model_parameters=[("matrix", matrix), ("vector", vector)])
    for gradient in golden["gradients"]:
        matrix.grad, vector.grad = torch.tensor(gradient), torch.tensor(gradient[1])
        built_optimizer.step()
    expected_matrix, expected_vector = golden["adafactor"]
    assert matrix.detach().flatten().tolist() == pytest.approx(sum(expected_matrix, []), abs=1e-7)
    assert vector.detach().tolist() == pytest.approx(expected_vector, abs=1e-7)


class Tagger(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 2)
        self.output = torch.nn.Linear(2, 4)
        self.kept = torch.nn.Linear(2, 2)


def test_initializer_regexes_in_allennlp_form_with_prevent_regexes():
    model = Tagger()
    kept_before = model.kept.weight.detach().clone()
    applicator = built(InitializerApplicator, {
        "regexes": [["lstm.*bias", "lstm_hidden_bias"], ["output.weight", {"type": "constant", "val": 0.5}],
                    [".*bias", {"type": "zero"}], ["weight", {"type": "xavier_normal", "gain": 2.0}]],
        "prevent_regexes": ["kept.weight"],
    })
    torch.manual_seed(5)
    applicator.apply(model)
    assert model.lstm.bias_ih_l0.tolist() == [0, 0, 1, 1, 0, 0, 0, 0]  # gates i|f|g|o, forget gate at 1
    assert torch.all(model.output.weight == 0.5)
    assert torch.all(model.output.bias == 0) and torch.all(model.kept.bias == 0)
    assert torch.equal(model.kept.weight, kept_before)
    torch.manual_seed(5)  # the first random initializer draws what torch's own would
    expected = torch.nn.init.xavier_normal_(torch.empty_like(model.lstm.weight_ih_l0), gain=2.0)
    assert torch.equal(model.lstm.weight_ih_l0, expected)


def test_initializer_regex_that_matches_nothing_is_a_warning_naming_its_key_path(caplog):
    """As in AllenNLP, which warns: its zoo configs carry such regexes (decomposable_attention_elmo's names the
    GloVe variant's ``token_embedder_tokens``), and they must run as they are."""
    applicator = built(InitializerApplicator, {"regexes": [["weight", "zero"], ["encoder", "orthogonal"]]})
    with caplog.at_level("WARNING", logger="distrain.optim.initializers"):
        done = applicator.apply(Tagger())
    assert done == ["lstm.weight_ih_l0", "lstm.weight_hh_l0", "output.weight", "kept.weight"]
    assert [record.getMessage() for record in caplog.records] == [
        "model.initializer.regexes[1]: 'encoder' matches no parameter of the model; it initialises nothing"]


def test_pretrained_initializer_copies_named_weights(tmp_path):
    source = Tagger()
    torch.save({"renamed": source.output.weight.detach()}, tmp_path / "weights.th")
    target = Tagger()
    built(InitializerApplicator, {"regexes": [["output.weight", {
        "type": "pretrained", "weights_file_path": str(tmp_path / "weights.th"),
        "parameter_name_overrides": {"output.weight": "renamed"}}]]}).apply(target)
    assert torch.equal(target.output.weight, source.output.weight)


def test_regularizer_gradient_is_the_penalty_gradient():
    model = Tagger()
    applicator = built(RegularizerApplicator, {"regexes": [["weight", {"type": "l2", "alpha": 0.3}],
                                                           ["bias", {"type": "l1", "alpha": 0.2}]]})
    for parameter in model.parameters():
        parameter.grad = torch.full_like(parameter, 0.25)
    applicator.add_gradients(model.named_parameters())
    penalty_gradients = torch.autograd.grad(applicator.penalty(model.named_parameters()), list(model.parameters()))
    for parameter, penalty_gradient in zip(model.parameters(), penalty_gradients):
        assert torch.allclose(parameter.grad, 0.25 + penalty_gradient)


MULTI = {"type": "multi", "optimizers": {"first": {"type": "sgd", "lr": 0.5}, "default": {"type": "adam", "lr": 0.1}},
         "parameter_groups": [[["^first"], {"optimizer_name": "first"}], [["^second\\.bias"], {"lr": 0.01}]]}


def test_multi_routes_each_parameter_group_to_its_named_optimizer_and_steps_each():
    """AllenNLP's ``multi``: ``first.*`` to SGD at 0.5; ``second.bias`` to the default Adam with its own rate; the
    rest to the default Adam. One SGD step moves ``first`` by 0.5 x its gradient; Adam's first moves by its rate."""
    model = torch.nn.ModuleDict({"first": torch.nn.Linear(2, 1), "second": torch.nn.Linear(2, 1)})
    multi = built(Optimizer, MULTI, model_parameters=list(model.named_parameters()))
    assert [type(part).__name__ for part in multi.optimizers.values()] == ["SgdOptimizer", "AdamOptimizer"]
    assert sorted(group["lr"] for group in multi.param_groups) == [0.01, 0.1, 0.5]
    before = {name: parameter.detach().clone() for name, parameter in model.named_parameters()}
    model["first"](torch.ones(1, 2)).sum().add(model["second"](torch.ones(1, 2)).sum()).backward()
    multi.step()
    torch.testing.assert_close(model["first"].weight, before["first.weight"] - 0.5)  # gradient 1 for each weight
    torch.testing.assert_close(model["second"].weight, before["second.weight"] - 0.1)
    torch.testing.assert_close(model["second"].bias, before["second.bias"] - 0.01)
    state = multi.state_dict()  # torch's own form over every part's groups: a checkpoint reloads it
    again = built(Optimizer, MULTI, model_parameters=list(model.named_parameters()))
    again.load_state_dict(state)
    assert again.optimizers["default"].state[model["second"].weight]["step"] == 1
    again.param_groups[0]["lr"] = 0.25  # a scheduler's change reaches the part
    assert again.optimizers["first"].param_groups[0]["lr"] == 0.25


def test_multi_names_a_missing_default_and_an_unknown_optimizer_name_with_their_key_paths():
    config = {**MULTI, "optimizers": {"first": {"type": "sgd"}},
              "parameter_groups": [[["^first"], {"optimizer_name": "frist"}]]}
    problems: list[Problem] = []
    resolve_object(Optimizer, config, "trainer.optimizer", problems)
    assert sorted(str(problem) for problem in problems) == [
        'trainer.optimizer.optimizers: names no "default" optimizer (for the parameters no group matches)',
        'trainer.optimizer.parameter_groups[0]: optimizer_name "frist" is not among optimizers (first)']
