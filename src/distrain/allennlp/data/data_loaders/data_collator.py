"""``allennlp.data.data_loaders.data_collator``: instances to one batch (``allennlp_collate``)."""

from distrain.allennlp.data.data_loaders.data_loader import DataCollator, DefaultDataCollator, allennlp_collate

__all__ = ["DataCollator", "DefaultDataCollator", "allennlp_collate"]
