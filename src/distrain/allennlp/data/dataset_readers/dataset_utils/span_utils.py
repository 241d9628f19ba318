"""``allennlp.data.dataset_readers.dataset_utils.span_utils``."""

from distrain.data.span_tags import (bio_tags_to_spans, bioul_tags_to_spans, bmes_tags_to_spans, enumerate_spans,
                                     iob1_tags_to_spans, iob1_to_bioul, to_bioul, InvalidTagSequence, TypedSpan,
                                     TypedStringSpan)

__all__ = [
    "InvalidTagSequence", "TypedSpan", "TypedStringSpan", "bio_tags_to_spans", "bioul_tags_to_spans",
    "bmes_tags_to_spans", "enumerate_spans", "iob1_tags_to_spans", "iob1_to_bioul", "to_bioul",
]
