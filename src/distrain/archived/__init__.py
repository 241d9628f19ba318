"""Components built from a trained model's archive: AllenNLP's ``from_archive`` model and ``_pretrained`` module
blocks. They load archives, so they stand above :mod:`distrain.experiment`, which the framework's models/ and
modules/ must not import."""
