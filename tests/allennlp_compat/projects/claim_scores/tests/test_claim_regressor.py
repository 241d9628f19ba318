from allennlp.common.testing import ModelTestCase

import claim_scores  # noqa: F401 - registers the project's reader, model and predictor


class TestClaimRegressor(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model("experiments/claim_regressor.jsonnet", "tests/fixtures/claims.tsv")

    def test_the_reader_gives_a_scalar_score_per_claim(self):
        assert len(self.instances) == 24
        first = self.instances[0]
        assert set(first.fields) == {"tokens", "metadata", "score"}
        assert first["score"].array.shape == ()

    def test_model_can_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(self.param_file)

    def test_batch_predictions_are_consistent(self):
        self.ensure_batch_predictions_are_consistent()
