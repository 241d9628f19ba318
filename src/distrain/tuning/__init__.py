"""Hyperparameter search over any config with Optuna (``distrain tune``).

- :mod:`.space`: the search space (dotted keys and ``extVar:NAME`` to distributions), pure functions.
- :mod:`.validation`: every extreme point of the space checked with the config machinery before any trial.
- :mod:`.pruning`: the trainer callback that reports each epoch's metric to the study and stops pruned trials.
- :mod:`.trial_runner`: one trial = one ``distrain train`` subprocess in ``DIR/trial_NNNN/``.
- :mod:`.study`: storage, sampler, pruner, and the loop that runs trials until the study holds N of them.
- :mod:`.report`: ``best_config.json``, ``trials.csv``, the summary table and ``search.png``.
"""
