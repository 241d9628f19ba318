"""Test components that make data flow observable: readers that emit record ids, and a model that
writes the ids it trains on to one file per process."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Iterator

import torch

from distrain.data.fields import MetadataField, TextField
from distrain.data.reader import DatasetReader
from distrain.models.model import Model
from distrain.modules.text_field_embedder import TextFieldTensors, get_token_ids_from_text_field_tensors


@DatasetReader.register("id_text_json")
class IdTextJsonReader(DatasetReader):
    """Distributed-aware: ``{"id": ..., "text": ...}`` read through ``json_lines``."""

    distributed_aware = True

    def _read(self, path: Path) -> Iterator[dict]:
        for _, record in self.json_lines(path, required=("id", "text")):
            yield self.text_to_instance(record["id"], record["text"])

    def text_to_instance(self, id: int, text: str) -> dict:
        return {"id": MetadataField(id), "tokens": TextField(text.split())}


@DatasetReader.register("id_text_unaware")
class IdTextUnawareReader(IdTextJsonReader):
    """The same records, read without knowing about shares (the framework filters)."""

    distributed_aware = False

    def _read(self, path: Path) -> Iterator[dict]:
        with open(path) as lines:
            for line in lines:
                if line.strip():
                    record = json.loads(line)
                    yield self.text_to_instance(record["id"], record["text"])


@Model.register("id_recorder")
class IdRecorder(Model):
    """Appends every id it sees to ``record_dir/{train,validation}.rankR.PID.txt`` (R: the process's rank
    in the job), one line per batch; placeholders are not counted."""

    def __init__(self, vocab: Any, record_dir: str) -> None:
        super().__init__(vocab)
        self.record_dir = Path(record_dir)
        self.weight = torch.nn.Parameter(torch.ones(1))
        self._placeholder = False

    @contextlib.contextmanager
    def metrics_frozen(self):
        self._placeholder = True
        try:
            with super().metrics_frozen():
                yield
        finally:
            self._placeholder = False

    def forward(self, id: list, tokens: TextFieldTensors, **_: Any) -> dict[str, torch.Tensor]:
        tokens = get_token_ids_from_text_field_tensors(tokens)
        if not self._placeholder:
            self.record_dir.mkdir(parents=True, exist_ok=True)
            phase = "train" if self.training else "validation"
            rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
            with open(self.record_dir / f"{phase}.rank{rank}.{os.getpid()}.txt", "a") as out:
                out.write(" ".join(str(i) for i in id) + "\n")
        loss = (self.weight * tokens.float().mean()).pow(2).sum()
        return {"loss": loss}
