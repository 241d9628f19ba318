"""Span extractors with AllenNLP's names, one per file (the base is :mod:`distrain.modules.span_extractor`)."""
