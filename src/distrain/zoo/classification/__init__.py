"""Text classification beyond the framework's ``basic_classifier``: the biattentive classification network and the
Stanford Sentiment Treebank and BoolQ readers."""
