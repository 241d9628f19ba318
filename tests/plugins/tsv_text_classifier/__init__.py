"""distrain's own TSV text classifier in AllenNLP's API; importing the package registers its three parts."""

from tsv_text_classifier.model import PooledTextClassifier
from tsv_text_classifier.predictor import TextLabelPredictor
from tsv_text_classifier.reader import LabelledTextTsvReader

__all__ = ["LabelledTextTsvReader", "PooledTextClassifier", "TextLabelPredictor"]
