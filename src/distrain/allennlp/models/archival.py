"""``allennlp.models.archival``: ``Archive`` and ``load_archive`` over distrain's ``model.tar.gz`` (and
AllenNLP's own archives, which distrain reads too). ``archive_model`` has no counterpart: ``distrain train``
writes the archive itself at the end of every run."""

from distrain.allennlp.archival import Archive, load_archive

__all__ = ["Archive", "load_archive"]
