"""AllenNLP's predictors of its core, under their registered names: JSON in, the model's readable outputs out
(the base class is :class:`distrain.predictors.predictor.Predictor`; the zoo's tasks hold their own predictors)."""
