"""``allennlp_models`` as AllenNLP users import it (``allennlp_models.<task>...``), served by
:mod:`distrain.compat.allennlp_imports` where the real package is not installed: the zoo's ports under
allennlp-models' module paths."""
