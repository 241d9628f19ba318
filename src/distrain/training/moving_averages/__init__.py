"""Moving averages of the parameters, one per file (the base is :mod:`distrain.training.moving_average`)."""
