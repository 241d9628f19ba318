from typing import Any, Dict, List, Optional

import torch
from overrides import overrides

from allennlp.data import Vocabulary
from allennlp.models.model import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import InitializerApplicator, RegularizerApplicator, util
from allennlp.training.metrics import MeanAbsoluteError, PearsonCorrelation


@Model.register("claim_regressor")
class ClaimRegressor(Model):
    """A claim's score from its averaged words: the AllenNLP 1.x way, regularizer to the base class."""

    default_predictor = "claim_scorer"

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, encoder: Seq2VecEncoder,
                 dropout: float = 0.0, initializer: InitializerApplicator = InitializerApplicator(),
                 regularizer: Optional[RegularizerApplicator] = None, **kwargs) -> None:
        super().__init__(vocab, regularizer, **kwargs)
        self._text_field_embedder = text_field_embedder
        self._encoder = encoder
        self._dropout = torch.nn.Dropout(dropout)
        self._output = torch.nn.Linear(encoder.get_output_dim(), 1)
        self._mae = MeanAbsoluteError()
        self._pearson = PearsonCorrelation()
        initializer(self)

    @overrides
    def forward(self, tokens: Dict[str, Dict[str, torch.Tensor]], score: Optional[torch.Tensor] = None,
                metadata: Optional[List[Dict[str, Any]]] = None) -> Dict[str, torch.Tensor]:
        mask = util.get_text_field_mask(tokens)
        encoded = self._dropout(self._encoder(self._text_field_embedder(tokens), mask))
        predicted = self._output(encoded).squeeze(-1)
        output = {"predicted_score": predicted}
        if metadata is not None:
            output["claim"] = [item["claim"] for item in metadata]
        if score is not None:
            output["loss"] = torch.nn.functional.mse_loss(predicted, score)
            self._mae(predicted, score)
            self._pearson(predicted, score)
        return output

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = dict(self._mae.get_metric(reset))
        metrics["pearson"] = self._pearson.get_metric(reset)
        return metrics
