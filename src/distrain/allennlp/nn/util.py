"""``allennlp.nn.util``: masks, masked operations and losses, with AllenNLP's signatures."""

from distrain.allennlp.util import get_text_field_mask, masked_mean, sequence_cross_entropy_with_logits

__all__ = ["get_text_field_mask", "masked_mean", "sequence_cross_entropy_with_logits"]
