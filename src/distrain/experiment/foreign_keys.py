"""Which of AllenNLP's keys a component block gives that its own class does not take: the keys distrain applies
elsewhere (:mod:`.model_keys` at assembly, :mod:`.trainer_keys` as a translation). A class whose constructor takes
such a key itself keeps it, as a user's AllenNLP component may."""

from __future__ import annotations

from typing import Any, Iterable

from distrain.config.schema import parameters_of
from distrain.registry import Registrable, RegistryError


def keys_its_class_lacks(block: Any, base: type[Registrable], keys: Iterable[str]) -> dict[str, Any]:
    """``keys`` of ``block`` (a config block of a ``base`` component) its registered class does not name; ``{}``
    when it gives none, or its type is unknown (the block's own validation reports that)."""
    keys = set(keys)
    if not isinstance(block, dict) or not keys & block.keys():
        return {}
    try:
        cls = base.by_name(block.get("type") or base.default_implementation)
    except (RegistryError, TypeError):
        return {}
    own = {parameter.name for parameter in parameters_of(cls)[0]}
    return {key: block[key] for key in keys if key in block and key not in own}
