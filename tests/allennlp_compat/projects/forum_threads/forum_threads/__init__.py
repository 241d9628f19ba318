"""A plugin project in AllenNLP 2.x idioms: a forum thread is a ``ListField`` of ``TextField`` posts, read by a
model that embeds with ``num_wrapping_dims=1`` and encodes each post through ``TimeDistributed``; the same reader
flattens a thread for AllenNLP's own ``basic_classifier`` around the project's ``max_pool`` encoder."""

from forum_threads.encoder import MaxPoolEncoder
from forum_threads.model import ThreadClassifier
from forum_threads.predictor import ThreadTopicPredictor
from forum_threads.reader import ThreadJsonlReader
