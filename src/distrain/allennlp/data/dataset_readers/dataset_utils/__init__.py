"""``allennlp.data.dataset_readers.dataset_utils``: spans from tags."""

from distrain.allennlp.data.dataset_readers.dataset_utils import span_utils
from distrain.data.span_tags import (bio_tags_to_spans, bioul_tags_to_spans, bmes_tags_to_spans, enumerate_spans,
                                     iob1_tags_to_spans, to_bioul, InvalidTagSequence, TypedSpan, TypedStringSpan)

__all__ = [
    "InvalidTagSequence", "TypedSpan", "TypedStringSpan", "bio_tags_to_spans", "bioul_tags_to_spans",
    "bmes_tags_to_spans", "enumerate_spans", "iob1_tags_to_spans", "span_utils", "to_bioul",
]
