from typing import Any, Dict, Optional

import torch
from overrides import overrides

from allennlp.common.checks import check_dimensions_match
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.data import TextFieldTensors
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder
from allennlp.nn import util
from allennlp.training.metrics import CategoricalAccuracy


@Model.register("review_classifier")
class ReviewClassifier(Model):
    default_predictor = "review_sentiment"

    def __init__(self, vocab: Vocabulary, embedder: TextFieldEmbedder, encoder: Seq2VecEncoder) -> None:
        super().__init__(vocab)
        check_dimensions_match(embedder.get_output_dim(), encoder.get_input_dim(), "embedder output dim",
                               "encoder input dim")
        self.embedder = embedder
        self.encoder = encoder
        self.classifier = torch.nn.Linear(encoder.get_output_dim(), vocab.get_vocab_size("labels"))
        self.accuracy = CategoricalAccuracy()

    @overrides
    def forward(self, text: TextFieldTensors, label: Optional[torch.Tensor] = None) -> Dict[str, torch.Tensor]:
        mask = util.get_text_field_mask(text)
        encoded = self.encoder(self.embedder(text), mask)
        logits = self.classifier(encoded)
        output = {"probs": torch.nn.functional.softmax(logits, dim=-1)}
        if label is not None:
            self.accuracy(logits, label)
            output["loss"] = torch.nn.functional.cross_entropy(logits, label)
        return output

    @overrides
    def make_output_human_readable(self, output_dict: Dict[str, torch.Tensor]) -> Dict[str, Any]:
        best = output_dict["probs"].argmax(dim=-1)
        output_dict["label"] = [self.vocab.get_token_from_index(int(i), "labels") for i in best]
        return output_dict

    @overrides
    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self.accuracy.get_metric(reset)}
