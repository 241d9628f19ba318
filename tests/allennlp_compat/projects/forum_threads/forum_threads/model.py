from typing import Dict, Optional

import torch

from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models import Model
from allennlp.modules import Seq2VecEncoder, TextFieldEmbedder, TimeDistributed
from allennlp.nn import util
from allennlp.training.metrics import CategoricalAccuracy, FBetaMeasure


@Model.register("thread_classifier")
class ThreadClassifier(Model):
    """Each post encoded alone (TimeDistributed), then the posts encoded into the thread's topic."""

    default_predictor = "thread_topic"

    def __init__(self, vocab: Vocabulary, embedder: TextFieldEmbedder, post_encoder: Seq2VecEncoder,
                 thread_encoder: Seq2VecEncoder, **kwargs) -> None:
        super().__init__(vocab, **kwargs)
        self.embedder = embedder
        self.post_encoder = TimeDistributed(post_encoder)
        self.thread_encoder = thread_encoder
        self.classifier = torch.nn.Linear(thread_encoder.get_output_dim(), vocab.get_vocab_size("labels"))
        self.accuracy = CategoricalAccuracy()
        self.f1 = FBetaMeasure(average="macro")

    def forward(self, posts: TextFieldTensors, label: Optional[torch.Tensor] = None) -> Dict[str, torch.Tensor]:
        token_mask = util.get_text_field_mask(posts, num_wrapping_dims=1)  # (threads, posts, tokens)
        embedded = self.embedder(posts, num_wrapping_dims=1)
        encoded_posts = self.post_encoder(embedded, token_mask)
        post_mask = token_mask.any(dim=-1)
        logits = self.classifier(self.thread_encoder(encoded_posts, post_mask))
        output = {"logits": logits, "probs": torch.nn.functional.softmax(logits, dim=-1)}
        if label is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, label)
            self.accuracy(logits, label)
            self.f1(logits, label)
        return output

    def make_output_human_readable(self, output_dict: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        best = output_dict["probs"].argmax(dim=-1)
        output_dict["topic"] = [self.vocab.get_token_from_index(int(index), "labels") for index in best]
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self.accuracy.get_metric(reset), "macro_f1": self.f1.get_metric(reset)["fscore"]}
