"""``allennlp.models.model``: distrain's own :class:`~distrain.models.model.Model`, the registrable base of
every model (``forward`` returning a dict with ``loss``, ``get_metrics(reset)``, ``make_output_human_readable``)."""

from distrain.models.model import Model

__all__ = ["Model"]
