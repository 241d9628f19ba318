"""``allennlp.common.lazy``: ``Lazy[T]``, a component whose construction waits for arguments known only at run
time. distrain's own :class:`~distrain.config.lazy.Lazy`: ``Lazy(SomeClass).construct(**kwargs)`` calls
``SomeClass(**kwargs)``, and a constructor annotated ``Lazy[T]`` gets a validated recipe from the config."""

from distrain.config.lazy import Lazy

__all__ = ["Lazy"]
