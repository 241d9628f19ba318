from allennlp.common.testing import ModelTestCase

import review_sentiment  # noqa: F401 - registers the project's reader, model and predictor


class TestReviewClassifier(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model("experiments/review_classifier.jsonnet", "tests/fixtures/reviews.jsonl")

    def test_the_reader_reads_every_review(self):
        assert len(self.instances) == 24
        assert sorted(self.vocab.get_token_to_index_vocabulary("labels")) == ["neg", "pos"]

    def test_model_can_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(self.param_file)

    def test_batch_predictions_are_consistent(self):
        self.ensure_batch_predictions_are_consistent()
