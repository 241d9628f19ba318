"""``ModelTestCase``'s checks fail where a model breaks what they check (the passing side runs in
test_allennlp_command.py, over a plugin project's own suite)."""

from __future__ import annotations

import pytest
import torch

from distrain.allennlp.common.testing import ModelTestCase
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model


class HalfUsed(Model):
    def __init__(self) -> None:
        super().__init__(Vocabulary())
        self.used = torch.nn.Linear(2, 1)
        self.unused = torch.nn.Linear(2, 1)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"loss": self.used(x).sum(), "scores": x - x.mean(dim=0)}  # the scores depend on the batch


def test_a_parameter_no_loss_reaches_fails_the_gradient_check():
    with pytest.raises(AssertionError, match="^no gradient for unused.weight, unused.bias\n"):
        ModelTestCase.check_model_computes_gradients_correctly(HalfUsed(), {"x": torch.ones(3, 2)})
    ModelTestCase.check_model_computes_gradients_correctly(HalfUsed(), {"x": torch.ones(3, 2)}, {"unused.weight",
                                                                                               "unused.bias"})


class Batched:
    """The part of an IndexedDataset the check reads: a batch of the given rows."""

    def __init__(self, rows: torch.Tensor) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def batch(self, indices):
        return {"x": self.rows[torch.as_tensor(indices)]}


def test_outputs_that_depend_on_the_batch_fail_the_consistency_check():
    case = ModelTestCase()
    case.model = HalfUsed()
    case.dataset = type("Dataset", (), {"dataset": Batched(torch.tensor([[1.0, 2.0], [3.0, 5.0]]))})()
    with pytest.raises(AssertionError, match="scores of instance 0"):
        case.ensure_batch_predictions_are_consistent()
    case.ensure_batch_predictions_are_consistent(keys_to_ignore=["scores"])
