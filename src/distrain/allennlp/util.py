"""``distrain.allennlp.util``: the same module of helpers as ``allennlp.nn.util`` (see :mod:`distrain.allennlp.nn.util`)."""

from distrain.allennlp.nn.util import *  # noqa: F401,F403 - one set of names under both paths
from distrain.allennlp.nn.util import __all__  # noqa: F401
