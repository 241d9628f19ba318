import pytest

from allennlp.common.testing import ModelTestCase

import forum_threads  # noqa: F401 - registers the project's reader, encoder, model and predictor


class TestThreadClassifier(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model("experiments/thread_classifier.jsonnet", "tests/fixtures/threads.jsonl")

    def test_a_thread_is_a_list_of_posts(self):
        assert len(self.instances) == 24
        assert all(len(instance["posts"]) >= 1 for instance in self.instances)
        assert sorted(self.vocab.get_token_to_index_vocabulary("labels")) == ["baking", "cycling", "gardening"]

    def test_model_can_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(self.param_file)

    def test_batch_predictions_are_consistent(self):
        self.ensure_batch_predictions_are_consistent()


class TestFlatClassifier(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model("experiments/flat_classifier.jsonnet", "tests/fixtures/threads.jsonl")

    def test_model_can_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(self.param_file)
