"""AllenNLP's ``Archive`` and ``load_archive`` (see :mod:`distrain.experiment.archive.loaded`)."""

from distrain.experiment.archive.loaded import Archive, load_archive

__all__ = ["Archive", "load_archive"]
