"""A plugin project written as AllenNLP 1.x users wrote theirs: a regression over claims, with ``lazy`` readers,
``Instance(fields=...)``, a scalar ``ArrayField``, ``**kwargs`` passed on, an initializer and a regularizer handed to
``Model.__init__`` positionally, and its own predictor."""

from claim_scores.model import ClaimRegressor
from claim_scores.predictor import ClaimScorer
from claim_scores.reader import ClaimTsvReader
