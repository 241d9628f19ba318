"""Model parallelism on CPU/gloo: per-rank parameter bytes and examples/s of tensor parallel 2 and
pipeline parallel 2 (GPipe and 1F1B) against DDP 2 on the same model (a BERT-style
``transformer_classifier``, random init), and the pipeline bubble measured against its bound.

Each layout runs 2 spawned processes (1 thread each) that build the model, parallelize it as
``distributed`` says (``parallelize``, the same code a training run uses) and time optimizer steps
(forward, backward, Adam) on one global batch of ``--batch`` sequences. The bubble of a pipelined
step is the share of its wall time a stage is not computing: ``1 - busy / step``, where busy is the
time spent in the stage's ``forward_one_chunk`` and ``backward_one_chunk`` (compute only; the
schedules wait for their sends and receives outside them), averaged over the stages. The bound of
an ideal pipeline (equal stages, free communication) is ``(P - 1) / (M + P - 1)``.

Run: /work/bin/cpuslot --all .venv/bin/python scripts/bench_model_parallel.py [--repeats 3]
     .venv/bin/python scripts/bench_model_parallel.py --quick    # a smoke run: a tiny model, 2 steps, once,
                                                                 # the pp2_1f1b layout only
Last line: ``pipeline_bubble_vs_bound=<measured bubble / bound>`` for 1F1B (median over repeats).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from harness import free_port

LAYOUTS = {
    "ddp2": {},
    "tp2": {"tensor_parallel_size": 2},
    "pp2_gpipe": {"pipeline_parallel_size": 2, "pipeline": {"schedule": "gpipe"}},
    "pp2_1f1b": {"pipeline_parallel_size": 2, "pipeline": {"schedule": "1f1b"}},
}


def write_model(folder: Path, hidden: int, layers: int) -> Path:
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=1000, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=4,
                        intermediate_size=4 * hidden, max_position_embeddings=128, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    BertModel(config).save_pretrained(folder)
    return folder


class ChunkTimer:
    """Time spent inside the pipeline stage's compute calls (patched on the class, this process only)."""

    busy = 0.0

    @classmethod
    def install(cls) -> None:
        from torch.distributed.pipelining.stage import _PipelineStageBase

        for name in ("forward_one_chunk", "backward_one_chunk"):
            original = getattr(_PipelineStageBase, name)

            def timed(self, *args, _original=original, **kwargs):
                started = time.perf_counter()
                try:
                    return _original(self, *args, **kwargs)
                finally:
                    cls.busy += time.perf_counter() - started

            setattr(_PipelineStageBase, name, timed)


def worker(rank: int, size: int, port: int, layout: dict, args: argparse.Namespace, folder: str, out: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=size)
    from distrain.config.schema import resolve_object
    from distrain.plugins import import_builtins

    import_builtins()
    from distrain.data.vocabulary import Vocabulary
    from distrain.distributed.config import DistributedConfig
    from distrain.distributed.world import World
    from distrain.models.transformer_classifier import TransformerClassifier

    block = json.loads(json.dumps({"cuda_devices": [-1] * size, **layout}))
    if "pipeline" in block:
        block["pipeline"]["microbatches"] = args.microbatches
    problems: list = []
    distributed = resolve_object(DistributedConfig, block, "distributed", problems).build()
    assert not problems and not distributed.problems(), problems or distributed.problems()
    dims = distributed.dims(size)
    world = World(rank=rank, size=size, device="cpu", dp_rank=dims.dp_rank(rank), dp_size=dims.dp_size)
    from distrain.distributed.config import build_parallelism
    from distrain.training.parallelize import parallelize

    torch.manual_seed(0)
    model = TransformerClassifier(Vocabulary({"labels": ["a", "b"]}), folder, pooling="mean", dropout=0.0)
    parallel = parallelize(model, build_parallelism(distributed, world), None, compile=False)
    optimizer = torch.optim.Adam([p for p in model.parameters() if not p.is_meta], lr=1e-4)
    from torch.distributed.tensor import DTensor

    held = [p for p in model.parameters() if not p.is_meta]
    param_bytes = sum((p.to_local() if isinstance(p, DTensor) else p).nbytes for p in held)
    per_rank = args.batch // dims.dp_size
    generator = torch.Generator().manual_seed(1 + dims.dp_rank(rank))
    tokens = torch.randint(5, 1000, (per_rank, args.length), generator=generator)
    label = torch.randint(0, 2, (per_rank,), generator=generator)
    if "pipeline_parallel_size" in layout:
        ChunkTimer.install()

    def step() -> None:
        output = parallel.module(tokens=tokens, label=label)
        output["loss"].backward()
        parallel.before_optimizer_step(model.parameters(), per_rank, args.batch)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(args.warmup):
        step()
    dist.barrier()
    ChunkTimer.busy = 0.0
    started = time.perf_counter()
    for _ in range(args.steps):
        step()
    dist.barrier()
    seconds = time.perf_counter() - started
    results = [None] * size
    dist.all_gather_object(results, {"param_bytes": param_bytes, "seconds": seconds, "busy": ChunkTimer.busy})
    if rank == 0:
        Path(out).write_text(json.dumps(results))
    dist.destroy_process_group()


def run_layout(name: str, args: argparse.Namespace, folder: Path, scratch: Path) -> dict:
    out = scratch / f"{name}.json"
    torch.multiprocessing.spawn(worker, args=(2, free_port(), LAYOUTS[name], args, str(folder), str(out)), nprocs=2)
    ranks = json.loads(out.read_text())
    seconds = max(rank["seconds"] for rank in ranks)
    figures = {"param_bytes": [rank["param_bytes"] for rank in ranks],
               "examples_per_s": args.batch * args.steps / seconds}
    if name.startswith("pp"):
        figures["bubble"] = statistics.mean(1 - rank["busy"] / rank["seconds"] for rank in ranks)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--length", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32, help="global batch (sequences)")
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="hidden 32, 2 layers, 2 timed steps, once, pp2_1f1b only: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.hidden, args.layers, args.length, args.batch, args.microbatches = 32, 2, 16, 8, 4
        args.steps, args.warmup, args.repeats = 2, 1, 1
    # quick: the layout of the last line only (tests/distributed/test_model_parallel.py trains every layout)
    layouts = ["pp2_1f1b"] if args.quick else list(LAYOUTS)
    bound = (2 - 1) / (args.microbatches + 2 - 1)
    with tempfile.TemporaryDirectory() as scratch:
        folder = write_model(Path(scratch) / "bert", args.hidden, args.layers)
        runs: dict[str, list[dict]] = {name: [] for name in layouts}
        for _ in range(args.repeats):
            for name in layouts:
                runs[name].append(run_layout(name, args, folder, Path(scratch)))
    print(f"model: BERT-style classifier, hidden {args.hidden}, {args.layers} layers, sequences of {args.length}; "
          f"global batch {args.batch}, {args.microbatches} micro-batches; 2 processes x 1 thread; "
          f"{args.steps} timed steps x {args.repeats} repeats")
    for name, figures in runs.items():
        speeds = [f["examples_per_s"] for f in figures]
        line = (f"{name:10s} per-rank parameter bytes {figures[0]['param_bytes']}  examples/s median "
                f"{statistics.median(speeds):.1f} (range {min(speeds):.1f}-{max(speeds):.1f})")
        if "bubble" in figures[0]:
            bubbles = [f["bubble"] for f in figures]
            line += (f"  bubble median {statistics.median(bubbles):.3f} (range {min(bubbles):.3f}-"
                     f"{max(bubbles):.3f}) vs bound {bound:.3f}")
        print(line)
    ratio = statistics.median(f["bubble"] for f in runs["pp2_1f1b"]) / bound
    print(f"pipeline_bubble_vs_bound={ratio:.2f}")


if __name__ == "__main__":
    main()
