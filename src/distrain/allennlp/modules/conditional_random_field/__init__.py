"""``allennlp.modules.conditional_random_field``: a linear-chain CRF and its constraints."""

from distrain.allennlp.modules.conditional_random_field.conditional_random_field import (
    ConditionalRandomField, ConditionalRandomFieldWeightEmission, ConditionalRandomFieldWeightLannoy,
    ConditionalRandomFieldWeightTrans, allowed_transitions, is_transition_allowed)

__all__ = [
    "ConditionalRandomField", "ConditionalRandomFieldWeightEmission", "ConditionalRandomFieldWeightLannoy",
    "ConditionalRandomFieldWeightTrans", "allowed_transitions", "is_transition_allowed",
]
