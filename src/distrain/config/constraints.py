"""Constraints that live in constructor annotations, so the schema checks them with everything else.

A range or sign is an ``annotated_types`` bound (``Annotated[int, Ge(1)]``); a rule no bound can say
is a :class:`Must` (``Annotated[str, Must("start with + or -", ...)]``). pydantic checks both when the
config is validated, before any data is read, and the problem is reported with its key path.
Checks that span several arguments belong in the component's ``argument_problems`` classmethod
(see :meth:`distrain.registry.Registrable.argument_problems`).

pydantic is imported only when a schema is built, so importing a component stays cheap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Callable

from annotated_types import Ge, Gt, Le, Lt

PositiveInt = Annotated[int, Ge(1)]
NonNegativeInt = Annotated[int, Ge(0)]
PositiveFloat = Annotated[float, Gt(0)]
NonNegativeFloat = Annotated[float, Ge(0)]
#: a probability or a fraction, 0 and 1 included (dropout, mask fractions)
Probability = Annotated[float, Ge(0), Le(1)]
#: a factor that must shrink what it multiplies: strictly between 0 and 1
ShrinkFactor = Annotated[float, Gt(0), Lt(1)]


@dataclass(frozen=True)
class Must:
    """A rule checked by ``test``; ``description`` completes "must ..." in errors and in ``distrain list``."""

    description: str
    test: Callable[[Any], bool]

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import PydanticCustomError, core_schema

        def check(value: Any) -> Any:
            if not self.test(value):
                raise PydanticCustomError("must", "must {description}", {"description": self.description})
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


#: a regular expression (``re`` syntax), checked to compile
Regex = Annotated[str, Must("be a valid regular expression", _compiles)]
