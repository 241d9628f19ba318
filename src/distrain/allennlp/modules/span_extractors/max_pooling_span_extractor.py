"""``allennlp.modules.span_extractors.max_pooling_span_extractor``."""

from distrain.modules.span_extractors.max_pooling import MaxPoolingSpanExtractor

__all__ = ["MaxPoolingSpanExtractor"]
