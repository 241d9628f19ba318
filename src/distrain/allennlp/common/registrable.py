"""``allennlp.common.registrable``: the base of every registry. It is distrain's own
:class:`~distrain.registry.Registrable`, so a user's ``@Model.register("x")`` lands in the registry distrain's
configs are resolved from: ``register(name, exist_ok=False)``, ``by_name``, ``list_available``,
``is_registered``, ``resolve_class_name`` and ``default_implementation`` behave as AllenNLP's. AllenNLP's
``register(name, constructor="from_x")`` (a classmethod as the constructor) is not supported: it is refused
with a message, and the class's ``__init__`` is what a config builds."""

from distrain.registry import Registrable

__all__ = ["Registrable"]
