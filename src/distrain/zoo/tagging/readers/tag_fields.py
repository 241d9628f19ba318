"""The fields a tagging reader makes of a sentence's tag columns: the chosen column as ``tags`` (the model's
target, in ``label_namespace``) and each feature column as ``<name>_tags`` in a namespace of its own, as AllenNLP's
CoNLL and CCGbank readers make them."""

from __future__ import annotations

from typing import Any, Mapping

from distrain.data.fields import SequenceLabelField, TextField


def declared_tag_fields(arguments: Mapping[str, Any], *, metadata: bool) -> dict[str, bool]:
    """A tagging reader's ``declared_fields``: tokens (and metadata), ``tags`` and one per feature label."""
    fields = {"tokens": True, **({"metadata": True} if metadata else {}), "tags": False}
    for label in arguments.get("feature_labels") or ():
        fields[f"{label}_tags"] = False
    return fields


def tag_fields(text: TextField, tags: Mapping[str, list[str] | None], tag_label: str, feature_labels,
               label_namespace: str, reader: str) -> dict[str, SequenceLabelField]:
    """``tags`` (column name -> a sentence's tags, None where not given) as fields over ``text``."""
    fields = {}
    for label in sorted(feature_labels):
        if tags[label] is None:
            raise ValueError(f"{reader}: feature_labels names {label}, but no {label} tags were given")
        fields[f"{label}_tags"] = SequenceLabelField(tags[label], text, label_namespace=f"{label}_tags")
    if tags[tag_label] is not None:
        fields["tags"] = SequenceLabelField(tags[tag_label], text, label_namespace=label_namespace)
    return fields
