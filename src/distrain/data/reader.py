"""DatasetReader base: a file path in, instances out; bad records named by file and line."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Iterator

from distrain.registry import Registrable

logger = logging.getLogger(__name__)


class DataError(Exception):
    """A record that cannot be read, named by ``file:line``."""


class DatasetReader(Registrable):
    """Subclasses implement :meth:`_read` (a generator of instances) and :meth:`text_to_instance`.

    ``max_instances`` caps how many instances are read. With ``skip_invalid`` a malformed record
    is counted and skipped instead of stopping the run; the count is logged when reading ends.
    """

    def __init__(self, max_instances: int | None = None, skip_invalid: bool = False) -> None:
        self.max_instances = max_instances
        self.skip_invalid = skip_invalid
        self.num_skipped = 0

    def read(self, path: str | Path) -> Iterator[dict]:
        path = Path(path)
        if not path.exists():
            raise DataError(f"data file not found: {path}")
        self.num_skipped = 0
        produced = 0
        for instance in self._read(path):
            if self.max_instances is not None and produced >= self.max_instances:
                break
            produced += 1
            yield instance
        if self.num_skipped:
            logger.warning("%s: skipped %d invalid record(s)", path, self.num_skipped)

    def _read(self, path: Path) -> Iterator[dict]:
        raise NotImplementedError

    def text_to_instance(self, *args: Any, **kwargs: Any) -> dict:
        raise NotImplementedError

    # --------------------------------------------------------------------------------- helpers
    def json_lines(self, path: Path, required: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
        """``(line_number, record)`` for each non-blank line; malformed lines raise or are skipped."""
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    if not isinstance(record, dict):
                        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
                    missing = [key for key in required if key not in record]
                    if missing:
                        raise ValueError(f"missing key(s) {', '.join(map(repr, missing))}")
                except ValueError as error:
                    self.invalid(path, number, str(error))
                    continue
                yield number, record

    def invalid(self, path: Path, line: int, problem: str) -> None:
        """Report a bad record: raise, or count it when ``skip_invalid`` is set."""
        if not self.skip_invalid:
            raise DataError(f"{path}:{line}: {problem}")
        self.num_skipped += 1
