"""AllenNLP's ``interleaving`` reader: several readers, each over its own file, read as one dataset whose instances
say which reader made them (a ``MetadataField`` named ``dataset_field_name``).

The data path maps each reader's name to its file (a mapping, or its JSON text as a config gives it). ``scheme``
``round_robin`` takes one instance from each reader in turn until all are exhausted; ``all_at_once`` takes each
reader's instances in one run, in the readers' order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Literal, Mapping

from distrain.data.reader import DataError, DatasetReader


@DatasetReader.register("interleaving")
class InterleavingDatasetReader(DatasetReader):
    """The instances of ``readers`` interleaved by ``scheme``, each marked with its reader's name."""

    def __init__(self, readers: dict[str, DatasetReader], dataset_field_name: str = "dataset",
                 scheme: Literal["round_robin", "all_at_once"] = "round_robin", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if scheme not in ("round_robin", "all_at_once"):
            raise ValueError(f"interleaving: scheme is round_robin or all_at_once, not {scheme!r}")
        self.readers = dict(readers)
        self.dataset_field_name = dataset_field_name
        self.scheme = scheme

    def paths(self, path: Any) -> dict[str, Any]:
        """Each reader's file, checked to name exactly the readers."""
        if isinstance(path, (str, Path)) and not isinstance(path, Mapping):
            try:
                path = json.loads(str(path))
            except ValueError:
                raise DataError(f"interleaving: the data path is a mapping of reader name to file (or its JSON), "
                                f"not {path!r}") from None
        if set(path) != set(self.readers):
            raise DataError(f"interleaving: the data path names {sorted(path)}, the readers are {sorted(self.readers)}")
        return dict(path)

    def check_path(self, path: Any) -> None:
        for name, file in self.paths(path).items():
            self.readers[name].check_path(file)

    def read(self, path: Any) -> Iterator[dict]:
        from distrain.data.fields import Instance, MetadataField

        files = self.paths(path)
        streams = {name: iter(self.readers[name].read(file)) for name, file in files.items()}
        instances = self._interleaved(streams)
        if self.shard.count > 1:
            instances = self._filtered(instances)
        for produced, (name, instance) in enumerate(instances):
            if self.max_instances is not None and produced >= self.max_instances:
                break
            instance = Instance(instance)
            instance[self.dataset_field_name] = MetadataField(name)
            yield instance

    def _interleaved(self, streams: dict[str, Iterator[dict]]) -> Iterator[tuple[str, dict]]:
        if self.scheme == "all_at_once":
            for name, stream in streams.items():
                yield from ((name, instance) for instance in stream)
            return
        live = dict(streams)
        while live:
            for name in list(live):
                instance = next(live[name], None)
                if instance is None:
                    del live[name]
                else:
                    yield name, instance

    def text_to_instance(self, *args: Any, **kwargs: Any) -> dict:
        raise NotImplementedError("interleaving: each reader makes its own instances")
