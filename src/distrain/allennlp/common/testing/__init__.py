"""``allennlp.common.testing``: what AllenNLP-style test suites are written with."""

from distrain.allennlp.common.testing.model_test_case import ModelTestCase

__all__ = ["ModelTestCase"]
