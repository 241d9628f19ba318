"""``allennlp.modules.span_extractors``: one vector per span of a sequence."""

from distrain.modules.span_extractor import SpanExtractor
from distrain.modules.span_extractors.bidirectional_endpoint import BidirectionalEndpointSpanExtractor
from distrain.modules.span_extractors.endpoint import EndpointSpanExtractor
from distrain.modules.span_extractors.max_pooling import MaxPoolingSpanExtractor
from distrain.modules.span_extractors.self_attentive import SelfAttentiveSpanExtractor

__all__ = [
    "BidirectionalEndpointSpanExtractor", "EndpointSpanExtractor", "MaxPoolingSpanExtractor",
    "SelfAttentiveSpanExtractor", "SpanExtractor",
]
