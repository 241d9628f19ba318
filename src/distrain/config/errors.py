"""Config errors as the user sees them: one line per problem, led by the key path."""

from __future__ import annotations

from dataclasses import dataclass

from distrain.errors import BadInput


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConfigError(BadInput):
    """Every problem found in a config, reported together."""

    def __init__(self, problems: list[Problem] | str, source: str | None = None) -> None:
        if isinstance(problems, str):
            problems = [Problem("", problems)]
        self.problems = problems
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        lines = [str(problem) for problem in self.problems]
        if len(lines) == 1:
            return lines[0]
        header = f"{len(lines)} problems in the config" + (f" {self.source}" if self.source else "") + ":"
        return "\n".join([header] + [f"  {line}" for line in lines])


def join_path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key
