"""A plugin project written as AllenNLP 2.x users write theirs: importing the package registers its reader,
model and predictor (``.allennlp_plugins`` names it, so ``allennlp train`` imports it)."""

from review_sentiment.model import ReviewClassifier
from review_sentiment.predictor import ReviewSentimentPredictor
from review_sentiment.reader import ReviewJsonlReader
