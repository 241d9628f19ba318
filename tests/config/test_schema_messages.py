"""A bad value's message at its key path, from config.schema.resolve in this process: each bound, type, length,
pattern and rule as the user reads it (test_config_constraints.py checks the same words through ``distrain check``)."""

from __future__ import annotations

from typing import Annotated, Literal

import pydantic
import pytest
from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen, MultipleOf

from distrain.config.constraints import NonNegativeInt, PositiveFloat, PositiveInt, Probability, Regex
from distrain.config.schema import resolve


def problems_of(annotation, value, path: str = "key") -> list[str]:
    problems: list = []
    resolve(annotation, value, path, problems)
    return [str(problem) for problem in problems]


@pytest.mark.parametrize("annotation,value,message", [
    (PositiveInt, 0, "must be at least 1, got 0"),
    (Annotated[int, Ge(3)], 2, "must be at least 3, got 2"),
    (NonNegativeInt, -1, "must be 0 or more, got -1"),
    (PositiveFloat, 0, "must be greater than 0, got 0"),
    (Annotated[float, Gt(0.5)], 0.25, "must be greater than 0.5, got 0.25"),
    (Probability, 1.5, "must be at most 1, got 1.5"),
    (Annotated[float, Le(2.0)], 3, "must be at most 2, got 3"),
    (Annotated[float, Lt(0.5)], 0.5, "must be less than 0.5, got 0.5"),
    (Annotated[int, MultipleOf(3)], 4, "must be a multiple of 3, got 4"),
    (Literal["bfloat16", "float16"], "fp8", "expected 'bfloat16' or 'float16', got \"fp8\""),
    (int, "3", 'expected an integer, got "3"'),
    (int, 1.5, "expected an integer, got 1.5"),
    (float, "x", 'expected a number, got "x"'),
    (bool, 1, "expected true or false, got 1"),
    (str, 5, "expected a string, got 5"),
    (list[int], {}, "expected a list, got {}"),
    (dict[str, int], [], "expected an object, got []"),
    (Regex, "(bias", 'must be a valid regular expression, got "(bias"'),
    (Annotated[list[int], MinLen(2)], [1], "must have at least 2 items, got [1]"),
    (Annotated[list[int], MinLen(1)], [], "must have at least 1 item, got []"),
    (Annotated[list[int], MaxLen(1)], [1, 2], "must have at most 1 item, got [1, 2]"),
    (Annotated[str, MinLen(1)], "", 'must not be empty, got ""'),
    (Annotated[str, MinLen(3)], "ab", 'must have at least 3 characters, got "ab"'),
    (Annotated[str, MinLen(2)], "a", 'must have at least 2 characters, got "a"'),
    (Annotated[str, MaxLen(2)], "abc", 'must have at most 2 characters, got "abc"'),
    (Annotated[str, MaxLen(1)], "ab", 'must have at most 1 character, got "ab"'),
    (Annotated[str, pydantic.StringConstraints(pattern="^a+$")], "b", 'must match the pattern ^a+$, got "b"'),
])
def test_each_kind_of_bad_value_reads_as_a_rule_and_the_value(annotation, value, message):
    assert problems_of(annotation, value) == [f"key: {message}"]


def test_a_good_value_has_no_problem_and_is_the_value():
    problems: list = []
    assert resolve(Annotated[int, Ge(1)], 3, "key", problems).build() == 3 and problems == []
    assert resolve(tuple[float, float], [0.9, 0.99], "key", problems).build() == (0.9, 0.99) and problems == []


def test_problems_inside_lists_and_objects_are_at_their_own_key_paths_all_at_once():
    assert problems_of(list[NonNegativeInt], [1, -2, -3]) == ["key[1]: must be 0 or more, got -2",
                                                               "key[2]: must be 0 or more, got -3"]
    assert problems_of(dict[str, PositiveInt], {"a": 0, "b": 2}, "trainer.counts") == [
        "trainer.counts.a: must be at least 1, got 0"]
    assert problems_of(tuple[float, Annotated[float, Lt(1)]], [0.9, 1.0], "betas") == [
        "betas[1]: must be less than 1, got 1.0"]


def test_a_union_reports_the_member_the_value_fits_or_every_member_expected():
    number_or_map = NonNegativeInt | dict[str, NonNegativeInt]
    assert problems_of(number_or_map, -1) == ["key: must be 0 or more, got -1"]
    assert problems_of(number_or_map, {"tokens": -1}) == ["key.tokens: must be 0 or more, got -1"]
    assert problems_of(number_or_map, "x") == ['key: expected an integer or an object, got "x"']
    assert problems_of(number_or_map, 3) == [] and problems_of(number_or_map, {"a": 1}) == []


def test_a_long_value_is_cut_to_sixty_characters():
    value = list(range(40))
    (message,) = problems_of(Annotated[list[int], MaxLen(2)], value)
    shown = message.rpartition("got ")[2]
    assert len(shown) == 60 and shown.endswith("...") and shown.startswith("[0, 1, 2, 3")
