"""``allennlp.training.metrics``: the metrics AllenNLP models report, under AllenNLP's names."""

from distrain.allennlp.training.metrics.checked import Auc, CategoricalAccuracy
from distrain.allennlp.training.metrics.fbeta import F1Measure, FBetaMeasure, SpanBasedF1Measure
from distrain.allennlp.training.metrics.fbeta_measures import (F1MultiLabelMeasure, FBetaMultiLabelMeasure,
                                                                FBetaVerboseMeasure)
from distrain.allennlp.training.metrics.results import (Entropy, MeanAbsoluteError, SequenceAccuracy,
                                                         UnigramRecall)
from distrain.allennlp.training.metrics.text_scores import BLEU, ROUGE
from distrain.metrics.average import Average
from distrain.metrics.boolean_accuracy import BooleanAccuracy
from distrain.metrics.covariance import Covariance
from distrain.metrics.metric import Metric
from distrain.metrics.pearson_correlation import PearsonCorrelation
from distrain.metrics.perplexity import Perplexity
from distrain.metrics.spearman_correlation import SpearmanCorrelation
from distrain.zoo.structured_prediction.metrics.attachment_scores import AttachmentScores
from distrain.zoo.structured_prediction.metrics.evalb import EvalbBracketingScorer

__all__ = [
    "AttachmentScores", "Auc", "Average", "BLEU", "BooleanAccuracy", "CategoricalAccuracy", "Covariance", "Entropy",
    "EvalbBracketingScorer", "F1Measure", "F1MultiLabelMeasure", "FBetaMeasure", "FBetaMultiLabelMeasure",
    "FBetaVerboseMeasure", "MeanAbsoluteError", "Metric", "PearsonCorrelation",
    "Perplexity", "ROUGE", "SequenceAccuracy", "SpanBasedF1Measure", "SpearmanCorrelation", "UnigramRecall",
]
