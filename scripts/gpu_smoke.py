"""Smoke check of the CUDA-only memory switches on a machine with GPUs: a small BERT MLM trained one
epoch through ``distrain train`` under each variant, with its peak GPU memory and tokens/s.

    python scripts/gpu_smoke.py [--gpus 1] [--layers 4] [--hidden 512]

Variants: fp32; bf16 autocast; activation checkpointing; activation offloading; and with 2+ GPUs,
FSDP with bf16 mixed precision and FSDP with CPU offload (FSDP shards over processes: one GPU has
nothing to shard over). Exits 2 without a CUDA device. CI never runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from distrain.training.callback import Callback

ROOT = Path(__file__).resolve().parents[1]
LAYERS = "encoder.transformer.encoder.layer.*"


@Callback.register("gpu_smoke_probe")
class GpuProbe(Callback):
    """Rank 0 writes peak GPU memory, training seconds and tokens seen to ``$GPU_SMOKE_OUT``."""

    def on_start(self, trainer) -> None:
        import time

        import torch

        torch.cuda.reset_peak_memory_stats()
        self.started = time.perf_counter()

    def on_end(self, trainer, metrics) -> None:
        import time

        import torch

        if trainer.world.is_primary:
            Path(os.environ["GPU_SMOKE_OUT"]).write_text(json.dumps({
                "peak_bytes": torch.cuda.max_memory_allocated(), "seconds": time.perf_counter() - self.started,
                "samples": trainer.position.samples * trainer.world.dp_size,
            }))


def config(folder: Path, layers: int, hidden: int) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    from transformer_fixtures import write_corpus, write_tiny_bert

    bert = write_tiny_bert(folder / "bert")
    corpus = write_corpus(folder / "corpus", files=4, sentences=400, seed=1)
    return {
        "dataset_reader": {"type": "text_blocks", "tokenizer_name": str(bert), "max_length": 64},
        "train_data_path": str(corpus / "*.txt"),
        "model": {"type": "masked_language_model", "tokenizer_name": str(bert), "config": str(bert),
                  "config_overrides": {"num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": 8,
                                       "intermediate_size": 4 * hidden}},
        "data_loader": {"batch_size": 16},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 1e-4}, "progress_bar": False,
                    "callbacks": [{"type": "gpu_smoke_probe"}]},
    }


def run(base: dict, folder: Path, name: str, gpus: int, trainer: dict, strategy: dict | None = None) -> dict:
    cfg = json.loads(json.dumps(base))
    cfg["trainer"].update(trainer)
    cfg["distributed"] = {"cuda_devices": list(range(gpus))} | ({"strategy": strategy} if strategy else {})
    path = folder / f"{name}.json"
    path.write_text(json.dumps(cfg))
    out = folder / f"{name}.figures.json"
    environment = dict(os.environ, GPU_SMOKE_OUT=str(out), HF_HUB_OFFLINE="1", DISTRAIN_CACHE=str(folder / "cache"),
                       PYTHONPATH=os.pathsep.join([str(ROOT / "scripts"), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "distrain", "train", str(path), "-s", str(folder / name), "--force",
                             "--include-package", "gpu_smoke"], capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1] if result.stderr.strip() else f"exit {result.returncode}"}
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=512)
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA device; this smoke check runs on a GPU machine only", file=sys.stderr)
        return 2
    variants = [
        ("fp32", {}, None),
        ("bf16_autocast", {"use_amp": True}, None),
        ("activation_checkpointing", {"activation_checkpointing": {"modules": [LAYERS]}}, None),
        ("activation_offloading", {"activation_offloading": True}, None),
    ]
    if args.gpus > 1:
        variants += [
            ("fsdp_bf16", {}, {"type": "fsdp", "mixed_precision": {"param_dtype": "bfloat16", "reduce_dtype": "float32"}}),
            ("fsdp_cpu_offload", {}, {"type": "fsdp", "cpu_offload": True}),
        ]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        base = config(folder, args.layers, args.hidden)
        for name, trainer, strategy in variants:
            figures = run(base, folder, name, args.gpus, trainer, strategy)
            if "error" in figures:
                print(f"{name:26s} FAILED: {figures['error']}")
                continue
            tokens = figures["samples"] * 64 / figures["seconds"]  # blocks of up to 64 tokens
            print(f"{name:26s} peak GPU memory {figures['peak_bytes'] / 2**20:8.1f} MiB   ~{tokens:,.0f} tokens/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
