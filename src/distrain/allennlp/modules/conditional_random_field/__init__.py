"""``allennlp.modules.conditional_random_field``: a linear-chain CRF and its constraints."""

from distrain.allennlp.modules.conditional_random_field.conditional_random_field import (ConditionalRandomField,
                                                                                         allowed_transitions,
                                                                                         is_transition_allowed)

__all__ = [
    "ConditionalRandomField", "allowed_transitions", "is_transition_allowed",
]
