"""Test components for the dry-run tests: a model that records, per rank, the size of every training
batch it receives (0 for a placeholder), and a strategy with a tensor-parallel degree (DDP underneath)
so that degrees which do not divide the process count can be tried."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch

from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.strategies.ddp import DistributedDataParallelStrategy
from distrain.distributed.strategy import ParallelStrategy
from distrain.models.model import Model
from distrain.modules.text_field_embedder import TextFieldTensors, get_token_ids_from_text_field_tensors


@Model.register("test_share_recorder")
class ShareRecorder(Model):
    """Appends each training batch's size to ``record_dir/train.rank{R}.txt``."""

    def __init__(self, vocab: Any, record_dir: str) -> None:
        super().__init__(vocab)
        self.record_dir = Path(record_dir)
        self.weight = torch.nn.Parameter(torch.ones(3))
        self._placeholder = False

    @contextlib.contextmanager
    def metrics_frozen(self):
        self._placeholder = True
        try:
            with super().metrics_frozen():
                yield
        finally:
            self._placeholder = False

    def forward(self, tokens: TextFieldTensors, **_: Any) -> dict[str, torch.Tensor]:
        tokens = get_token_ids_from_text_field_tensors(tokens)
        if self.training and tokens.device.type != "meta":
            rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
            self.record_dir.mkdir(parents=True, exist_ok=True)
            with open(self.record_dir / f"train.rank{rank}.txt", "a") as out:
                out.write(f"{0 if self._placeholder else len(tokens)}\n")
        return {"loss": (self.weight.sum() * tokens.float().mean()).pow(2)}


@ParallelStrategy.register("test_tensor_parallel")
class TensorParallelDegrees(DistributedDataParallelStrategy):
    """DDP, declaring a tensor-parallel degree ``tp`` (only its degrees matter to the tests)."""

    def __init__(self, world=None, tp: int = 1, **kwargs) -> None:
        super().__init__(**({"world": world} if world is not None else {}), **kwargs)
        self.tp = tp

    @classmethod
    def dims(cls, world_size: int, arguments: dict[str, Any]) -> ParallelDims:
        tp = int(arguments.get("tp", 1))
        return ParallelDims(world_size, dp_replicate=max(1, world_size // tp), tp=tp)


