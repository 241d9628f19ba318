"""Test components for elastic runs: numbered samples, a classifier that notes the numbers it trains on, a
callback that keeps the global tally in the checkpoint, and one that holds a step until a node joins.

The tally is part of the checkpoint (a callback state), so steps lost with a killed worker and trained again
after the resume are counted once, as their updates are: at the end it says which samples the final weights
were trained on, epoch by epoch, whatever worlds the run went through."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import torch

from distrain.data.fields import MetadataField
from distrain.data.reader import DatasetReader
from distrain.data.readers.text_classification_json import TextClassificationJsonReader
from distrain.models.basic_classifier import BasicClassifier
from distrain.models.model import Model
from distrain.training.callback import Callback


@DatasetReader.register("test_numbered_text")
class NumberedTextReader(TextClassificationJsonReader):
    """``text_classification_json`` whose records carry an ``"id"``, given to the model as ``sample_id``."""

    def record_to_instance(self, record: dict) -> dict:
        return {**super().record_to_instance(record), "sample_id": MetadataField(int(record["id"]))}

    @classmethod
    def declared_fields(cls, arguments):
        return {**super().declared_fields(arguments), "sample_id": True}


@Model.register("test_counting_classifier")
class CountingClassifier(BasicClassifier):
    """A basic classifier that notes the ``sample_id`` of every instance it trains on (not placeholders)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.trained_ids: list[int] = []

    def forward(self, tokens, label=None, sample_id: list[int] | None = None, **rest: Any):
        if self.training and sample_id is not None:
            self.trained_ids.extend(int(number) for number in sample_id)
        return super().forward(tokens, label, **rest)


@Callback.register("test_count_samples")
class CountSamples(Callback):
    """After every step, gathers from all workers the sample ids the step trained on and adds them to the
    epoch's tally; the primary writes the tally to ``samples_trained.json`` at the end."""

    def __init__(self) -> None:
        self.tally: dict[str, list[int]] = {}

    def on_step(self, trainer, step, loss) -> None:
        model = trainer.model
        mine, model.trained_ids = model.trained_ids, []
        everyone = [mine]
        if torch.distributed.is_initialized():
            everyone = [None] * torch.distributed.get_world_size()
            torch.distributed.all_gather_object(everyone, mine)
        epoch = str(trainer.position.epoch)
        self.tally.setdefault(epoch, []).extend(number for ids in everyone for number in ids)

    def on_end(self, trainer, metrics) -> None:
        if trainer.world.is_primary:
            (Path(trainer.serialization_dir) / "samples_trained.json").write_text(json.dumps(self.tally))

    def state_dict(self) -> dict[str, Any]:
        return {"tally": json.dumps(self.tally)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.tally = json.loads(state["tally"])


@Callback.register("test_wait_for_node")
class WaitForNode(Callback):
    """``DISTRAIN_TEST_WAIT_AT_STEP=k`` and ``DISTRAIN_TEST_MARKER=path``: when a worker alone in its world
    reaches step k, it writes that file and waits (up to 120 s) for the stop signal torchrun sends when a node
    joins, so the join lands mid-run at a known step however fast the steps are."""

    def on_step(self, trainer, step, loss) -> None:
        if os.environ.get("DISTRAIN_TEST_WAIT_AT_STEP") != str(step) or trainer.world.size != 1:
            return
        Path(os.environ["DISTRAIN_TEST_MARKER"]).write_text(str(step))
        deadline = time.monotonic() + 120
        while not trainer.stop_requested and time.monotonic() < deadline:
            time.sleep(0.01)
