"""Widths known before anything is built: what a configured component gives and what it was told it takes.

AllenNLP configs repeat sizes (an encoder's ``embedding_dim``, a feed-forward's ``input_dim``) that
distrain can infer from the component before it. Both are accepted; when a repeated size differs from
the inferred one, the config is wrong, and that is said with the key path and both sizes before any
data is read (AllenNLP found it at the first forward pass).

A component class takes part by declaring ``input_size_key`` (the argument naming its input width)
and ``configured_output_dim(recipe, input_dim)``; a recipe is the :class:`~distrain.config.lazy.Lazy`
that validation hands to ``argument_problems``. The base classes of embedders, encoders and feed-forwards
take the contract's defaults and AllenNLP's ``get_input_dim``/``get_output_dim`` from :class:`OutputWidth`
and :class:`Widths`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from distrain.config.errors import Problem, join_path


class OutputWidth:
    """A component that knows its output width once built (``output_dim``, AllenNLP's ``get_output_dim``) and,
    by default, not before."""

    output_dim: int

    @classmethod
    def configured_output_dim(cls, recipe: Any, input_dim: int | None = None) -> int | None:
        """The width the configured component (``recipe``) outputs for ``input_dim`` (None: unknown until built)."""
        return None

    def get_output_dim(self) -> int:
        return self.output_dim


class Widths(OutputWidth):
    """A component that is told its input width (``input_dim``), by its owner or, under ``input_size_key``, by
    the config (None: the config never states it)."""

    input_size_key: ClassVar[str | None] = None
    input_dim: int

    @classmethod
    def input_dim_problem(cls, recipe: Any, input_dim: int) -> str | None:
        """Why the configured component (``recipe``) cannot take ``input_dim`` (None: it can). ``input_dim``
        comes from the owner, so the owner's ``argument_problems`` asks this when the config is validated."""
        return None

    def get_input_dim(self) -> int:
        return self.input_dim


def output_dim(recipe: Any, input_dim: int | None = None) -> int | None:
    """The width ``recipe``'s component will output given ``input_dim`` (None: not known before building)."""
    hook = getattr(getattr(recipe, "cls", None), "configured_output_dim", None)
    return hook(recipe, input_dim) if hook is not None else None


def explicit_input_dim(recipe: Any) -> int | None:
    """The input width the config states for ``recipe`` (its ``input_size_key``), if it states one."""
    key = getattr(getattr(recipe, "cls", None), "input_size_key", None)
    return recipe.argument(key) if key else None


def input_problems(recipe: Any, input_dim: int | None, path: str, source: str) -> list[Problem]:
    """A stated input width that is not the ``input_dim`` ``source`` gives, and the component's own
    objections to that width (``input_dim_problem``), as problems under ``path``."""
    if recipe is None or input_dim is None or getattr(recipe, "cls", None) is None:
        return []
    stated = explicit_input_dim(recipe)
    if stated is not None and stated != input_dim:
        key = recipe.cls.input_size_key
        return [Problem(join_path(path, key), f"is {stated}, but {source} gives {input_dim}")]
    hook = getattr(recipe.cls, "input_dim_problem", None)
    problem = hook(recipe, input_dim) if hook is not None else None
    return [Problem(path, f"{problem}; {source} gives {input_dim}")] if problem else []


def chain_problems(stages: list[tuple[str, Any]], width: int | None, source: str) -> tuple[list[Problem], int | None]:
    """Follow a width through ``stages`` (argument name, recipe or None), each fed by the one before.

    Returns the problems found and the width that comes out of the last stage (None once unknown)."""
    problems: list[Problem] = []
    for name, recipe in stages:
        if recipe is None:
            continue
        problems += input_problems(recipe, width, name, source)
        if problems:
            return problems, None
        width = output_dim(recipe, width)
        source = f"the {name}"
    return problems, width


def resolve_input_dim(stated: int | None, given: int | None, key: str) -> int:
    """The input width to build with: the one the owner passes, else the one the config states."""
    if given is not None and stated is not None and given != stated:
        raise ValueError(f"{key} is {stated}, but the input is {given} wide")
    size = given if given is not None else stated
    if size is None:
        raise ValueError(f"{key} is needed: nothing passes this component its input width")
    return size
