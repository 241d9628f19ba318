"""DatasetReader base: a file path in, instances out; bad records named by file and line.

A reader may hold only a *share* of the data: :class:`ReaderShard` says which of
``world_size × num_workers`` readers this one is (rank-major). A distributed-aware reader
(``distributed_aware = True``) reads only its share itself, typically through :meth:`owned_lines`,
which skips other readers' records without parsing them. For any other reader the base class
reads everything and keeps every ``count``-th instance, after a one-time notice.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from distrain.config.constraints import NonNegativeInt
from distrain.registry import Registrable
from distrain.errors import BadInput

logger = logging.getLogger(__name__)

_NOTIFIED: set[str] = set()


class DataError(BadInput):
    """A record that cannot be read, named by ``file:line``."""


class RecordError(ValueError):
    """One input record that cannot become an instance; ``field`` names the offending key (or None)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ReaderShard:
    """Which reader of the job this is: rank ``rank`` of ``world_size``, loader worker ``worker`` of ``num_workers``."""

    rank: int = 0
    world_size: int = 1
    worker: int = 0
    num_workers: int = 1

    @property
    def index(self) -> int:
        return self.rank * self.num_workers + self.worker

    @property
    def count(self) -> int:
        return self.world_size * self.num_workers

    def owns(self, position: int) -> bool:
        return position % self.count == self.index


WHOLE = ReaderShard()


class DatasetReader(Registrable):
    """Subclasses implement :meth:`_read` (a generator of instances) and :meth:`text_to_instance`.

    ``max_instances`` caps how many instances this reader (this share) yields. With ``skip_invalid`` a
    malformed record is counted and skipped instead of stopping the run; the count is logged at the end.
    """

    #: True when :meth:`_read` itself yields only this reader's share (see :attr:`shard`)
    distributed_aware: bool = False

    def __init__(self, max_instances: NonNegativeInt | None = None, skip_invalid: bool = False,
                 manual_distributed_sharding: bool = False, manual_multiprocess_sharding: bool = False,
                 serialization_dir: str | None = None, lazy: bool = False) -> None:
        """The last four are AllenNLP's: a reader that shards itself (with :meth:`shard_iterable`) says so
        with ``manual_distributed_sharding`` and is then distributed-aware; ``serialization_dir`` and
        AllenNLP 1.x's ``lazy`` are accepted and unused (``data_loader.lazy`` streams in distrain)."""
        self.max_instances = max_instances
        self.skip_invalid = skip_invalid
        if manual_distributed_sharding or manual_multiprocess_sharding:
            self.distributed_aware = True
        self.num_skipped = 0
        #: records this reader decoded (e.g. ``json.loads`` calls); other shares' records are not counted
        self.num_parsed = 0
        self.shard = WHOLE

    def set_shard(self, shard: ReaderShard) -> None:
        """Read only ``shard``'s share from now on (``WHOLE`` reads everything)."""
        self.shard = shard

    def read(self, path: str | Path) -> Iterator[dict]:
        """The instances of ``path`` (this reader's share); a plain dict of fields comes out as an
        :class:`~distrain.data.fields.Instance`, whose ``fields`` AllenNLP-style code reads."""
        from distrain.data.fields import Instance

        self.check_path(path)
        self.num_skipped = 0
        self.num_parsed = 0
        instances = self._read(Path(path) if not isinstance(path, Path) else path)
        if self.shard.count > 1 and not self.distributed_aware:
            instances = self._filtered(instances)
        produced = 0
        for instance in instances:
            if self.max_instances is not None and produced >= self.max_instances:
                break
            produced += 1
            yield instance if isinstance(instance, Instance) or not isinstance(instance, dict) else Instance(instance)
        if self.num_skipped:
            logger.warning("%s: skipped %d invalid record(s)", path, self.num_skipped)

    def check_path(self, path: str | Path) -> None:
        """Fail early on a missing input; readers of globs or directories override this."""
        if not Path(path).exists():
            raise DataError(f"data file not found: {path}")

    def check_shares(self, path: str | Path, readers: int) -> None:
        """Raise :class:`DataError` now if ``path`` cannot be split among ``readers`` readers (called by
        the parent before streaming, so the user sees one line instead of a worker's traceback)."""

    def _filtered(self, instances: Iterator[dict]) -> Iterator[dict]:
        name = type(self).__name__
        if name not in _NOTIFIED:
            _NOTIFIED.add(name)
            logger.info(
                "%s is not distributed-aware: each of %d readers parses every record and keeps its share; "
                "set distributed_aware = True and use owned_lines() to skip other shares unparsed",
                name, self.shard.count,
            )
        for position, instance in enumerate(instances):
            if self.shard.owns(position):
                yield instance

    def shard_iterable(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """The items of ``iterable`` that belong to this reader's share (AllenNLP's name): a reader that
        wraps its records in this, before parsing them, reads only its share."""
        for position, item in enumerate(iterable):
            if self.shard.owns(position):
                yield item

    def _read(self, path: Path) -> Iterator[dict]:
        raise NotImplementedError

    @classmethod
    def declared_fields(cls, arguments: Mapping[str, Any]) -> dict[str, bool] | None:
        """The fields this reader's instances hold, known from its configured ``arguments`` alone (each
        with whether every instance has it; ``False`` for e.g. a label that unlabelled data lacks).

        ``distrain check`` compares them with the model's ``forward`` before any data is read. None (the
        default): not declared, so that check is skipped; a subclass that changes what its parent reads
        (``_read``, ``text_to_instance``, ``record_to_instance``) is not trusted with its parent's answer.
        """
        return None

    def text_to_instance(self, *args: Any, **kwargs: Any) -> dict:
        raise NotImplementedError

    # ------------------------------------------------------------------- one record at a time
    def record_to_instance(self, record: dict) -> dict:
        """One input record, as a parsed line of the data file, turned into an instance.

        Readers whose files hold one JSON object per line implement this and use it in :meth:`_read`,
        so a record sent to ``distrain serve`` is validated exactly as the same line of a file would
        be. Raise :class:`RecordError` naming the field that is wrong.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot read a single record")

    def input_fields(self) -> dict[str, str]:
        """The keys a record is made of (name → ``"text"`` or ``"json"``), e.g. for a form per field."""
        raise NotImplementedError(f"{type(self).__name__} does not name its input fields")

    @staticmethod
    def require(record: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
        """``record[key]``, or a :class:`RecordError` naming ``key`` if it is missing or not ``what``."""
        if not isinstance(record, dict):
            raise RecordError(f"expected a JSON object, got {type(record).__name__}")
        if key not in record:
            raise RecordError(f"missing key {key!r}", key)
        value = record[key]
        if not isinstance(value, kind):
            raise RecordError(f'"{key}" must be {what}, got {type(value).__name__}', key)
        return value

    # --------------------------------------------------------------------------------- helpers
    def owned_lines(self, path: Path, shard: ReaderShard | None = None) -> Iterator[tuple[int, str]]:
        """``(line_number, line)`` for the non-blank lines of this reader's share (or ``shard``'s:
        ``WHOLE`` for every line), unparsed.

        Non-blank lines are dealt round-robin to the ``shard.count`` readers, so each reads at most
        ``ceil(M / count)`` of ``M`` records and the shares together are the whole file.
        """
        shard = shard or self.shard
        position = 0
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                mine = position % shard.count == shard.index
                position += 1
                if mine:
                    yield number, line

    def json_lines(self, path: Path, required: tuple[str, ...] = (),
                   shard: ReaderShard | None = None) -> Iterator[tuple[int, dict]]:
        """``(line_number, record)`` for each record of this reader's share (or ``shard``'s);
        malformed lines raise or are skipped."""
        for number, line in self.owned_lines(path, shard):
            try:
                self.num_parsed += 1
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
