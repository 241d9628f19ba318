"""A reader that leaves a mark for every record it reads, so a test can prove that nothing was read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from distrain.data.reader import DatasetReader
from distrain.data.readers.text_classification_json import TextClassificationJsonReader


@DatasetReader.register("read_counting_json")
class ReadCountingJsonReader(TextClassificationJsonReader):
    """``text_classification_json`` that appends one line to ``marker_dir/reads.PID.txt`` per record read."""

    def __init__(self, marker_dir: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.marker_dir = Path(marker_dir)

    def _read(self, path: Path) -> Iterator[dict]:
        self.marker_dir.mkdir(parents=True, exist_ok=True)
        marker = self.marker_dir / f"reads.{os.getpid()}.txt"
        for instance in super()._read(path):
            with open(marker, "a") as out:
                out.write(f"{path}\n")
            yield instance

