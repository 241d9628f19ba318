"""AllenNLP's rule for ``**kwargs``: a component whose constructor takes them receives the keys of its block that it
does not name, while the keys it names (its own and, through ``**kwargs``, its parent's) are validated as usual; a
constructor without ``**kwargs`` still refuses an unknown key, at its key path."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from distrain.config.errors import ConfigError
from distrain.config.schema import resolve_object
from distrain.registry import Registrable


class Scorer(Registrable):
    def __init__(self, weight: float = 1.0) -> None:
        self.weight = weight


@Scorer.register("user_kwargs_scorer")
class KeywordScorer(Scorer):
    """A user's component, as AllenNLP users write them: extra keys arrive in ``kwargs``."""

    def __init__(self, name: str, **kwargs) -> None:
        self.name = name
        self.extras = {key: kwargs.pop(key) for key in list(kwargs) if key != "weight"}
        super().__init__(**kwargs)


@Scorer.register("user_strict_scorer")
class StrictScorer(Scorer):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


@dataclass
class Holder:
    scorer: Scorer


def built(config: dict):
    problems: list = []
    plan = resolve_object(Holder, config, "model", problems)
    if problems:
        raise ConfigError(problems)
    return plan.build()


def test_a_kwargs_constructor_receives_the_keys_it_does_not_name():
    holder = built({"scorer": {"type": "user_kwargs_scorer", "name": "a", "weight": 2.5, "temperature": 0.3,
                               "labels": ["x", "y"]}})
    assert holder.scorer.name == "a" and holder.scorer.weight == 2.5
    assert holder.scorer.extras == {"temperature": 0.3, "labels": ["x", "y"]}


def test_the_keys_a_kwargs_constructor_names_are_still_validated():
    with pytest.raises(ConfigError) as caught:
        built({"scorer": {"type": "user_kwargs_scorer", "name": 3, "weight": "heavy", "temperature": 0.3}})
    assert sorted(str(problem) for problem in caught.value.problems) == [
        "model.scorer.name: expected a string, got 3", 'model.scorer.weight: expected a number, got "heavy"']


def test_a_constructor_without_kwargs_refuses_an_unknown_key_at_its_path():
    with pytest.raises(ConfigError) as caught:
        built({"scorer": {"type": "user_strict_scorer", "name": "a", "temperature": 0.3}})
    assert [str(problem) for problem in caught.value.problems] == [
        "model.scorer.temperature: unknown key; user_strict_scorer takes: name"]


def test_distrains_own_kwargs_components_still_refuse_a_misspelt_key():
    """distrain's readers pass ``**kwargs`` to the base reader only, so a key no class of the chain names is a
    typo, said before any data is read."""
    from distrain.data.reader import DatasetReader
    from distrain.plugins import import_builtins

    import_builtins()
    problems: list = []
    resolve_object(DatasetReader, {"type": "sequence_tagging", "word_tag_delimiterr": "/"}, "dataset_reader", problems)
    assert [problem.path for problem in problems] == ["dataset_reader.word_tag_delimiterr"]
    assert "did you mean" in problems[0].message

    @DatasetReader.register("user_tagging_without_init", exist_ok=True)
    class UserTagging(DatasetReader.by_name("sequence_tagging")):
        """A user's subclass that keeps distrain's constructor: its keys are that constructor's."""

    problems = []
    resolve_object(DatasetReader, {"type": "user_tagging_without_init", "word_tag_delimiterr": "/"}, "reader",
                   problems)
    assert [problem.path for problem in problems] == ["reader.word_tag_delimiterr"]
