"""What sharding saves: a BERT MLM (default 302 M parameters, BERT-large's 24 layers of 1024) with
AdamW trained a few steps through ``distrain train``, on 1 process and on 2 FSDP ranks (gloo, CPU).
Each rank reports the bytes of parameters + gradients + optimizer state it holds, and its peak
resident memory (``ru_maxrss``).

    python scripts/bench_sharding.py [--layers 24] [--hidden 1024] [--checkpoint-format full]
    python scripts/bench_sharding.py --quick    # a smoke run: 1 layer of 64, the 2 FSDP ranks only

Under FSDP with delayed initialisation, rank 0 builds (or loads) the model and scatters the shards;
rank 1 never holds the whole model, so its peak is the figure sharding is for
(``peak_rss_ratio_nonloading_rank``). Every process also holds what it has before any model: about
360-400 MiB here (torch, transformers with what it imports, the data), the same on every rank. That
floor is why the default model is large: at 77 M parameters (``--layers 6``) it is a quarter of one
process's peak, and even a rank holding exactly half the state could not go below ~0.60 of one
process; the bench prints that floor (``half_state_floor``) beside the measured ratio. Rank 1's peak
also holds, during backward, one layer's gathered parameters and gradients and the next layer's
prefetched parameters (about 150 MiB at hidden size 1024).

The one-process reference runs with glibc's own malloc policy
(``GLIBC_TUNABLES=glibc.malloc.perturb=0``, which is glibc's default, turns distrain's
``keep_step_memory`` off; see ``distrain.compat.host_memory``): that policy keeps a step's freed
heap for the next step, which raises one process's peak (by ~10% at the default size) and would
flatter the ratio.

Last line: ``memory_ratio_fsdp2=<per-rank state bytes on 2 ranks / on 1 process>`` (the largest rank's); with
``--quick``, which runs no one-process reference, ``fsdp2_state_bytes=<the largest rank's state>``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
from pathlib import Path

from harness import environment, run_distrain

from distrain.training.callback import Callback

WORDS = ["the", "cat", "dog", "sat", "on", "a", "mat", "ran", "to", "house", "big", "small", "red", "blue"]


@Callback.register("bench_sharding_probe")
class ShardingProbe(Callback):
    """Writes this rank's state bytes (after the first step) and its peak RSS (at the end) to
    ``$BENCH_SHARDING_OUT/rank{r}.json``."""

    def __init__(self) -> None:
        self.figures: dict = {}

    def on_start(self, trainer) -> None:
        self.setup_peak = _peak_rss()  # model built, sharded (and materialised), optimizer made

    def on_step(self, trainer, step, loss) -> None:
        if step != 1:
            return
        local = lambda t: t.to_local() if hasattr(t, "to_local") else t  # noqa: E731
        size = lambda t: local(t).numel() * local(t).element_size()  # noqa: E731
        parameters = list(trainer.model.parameters())
        self.figures = {
            "parameters": sum(size(p) for p in parameters),
            "gradients": sum(size(p) for p in parameters if p.requires_grad),  # what backward allocates
            "optimizer": sum(size(v) for state in trainer.optimizer.state.values() for v in state.values()
                             if hasattr(v, "numel")),
            "parameter_count": sum(p.numel() for p in parameters),
            "peak_rss_setup": self.setup_peak,
            "peak_rss_first_step": _peak_rss(),
        }

    def on_epoch(self, trainer, epoch, metrics) -> None:
        self.figures["peak_rss_before_checkpoint"] = _peak_rss()  # every step done, the checkpoint not yet

    def on_end(self, trainer, metrics) -> None:
        self.figures["peak_rss"] = _peak_rss()
        out = Path(os.environ["BENCH_SHARDING_OUT"])
        out.mkdir(parents=True, exist_ok=True)
        (out / f"rank{trainer.world.rank}.json").write_text(json.dumps(self.figures))


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_inputs(folder: Path, layers: int, hidden: int, args_format: str) -> dict:
    """A WordPiece vocabulary + BERT config folder and a small corpus; the config for ``distrain train``."""
    folder.mkdir(parents=True, exist_ok=True)
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    (folder / "vocab.txt").write_text("\n".join(special + WORDS + ["."]) + "\n")
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer", "do_lower_case": True}))
    (folder / "config.json").write_text(json.dumps({
        "model_type": "bert", "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": 8,
        "intermediate_size": 4 * hidden, "max_position_embeddings": 32, "vocab_size": len(special) + len(WORDS) + 1,
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
    }))
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(" ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(6)) + " ." for i in range(40)))
    return {
        "dataset_reader": {"type": "text_blocks", "tokenizer_name": str(folder), "max_length": 16},
        "train_data_path": str(corpus),
        "model": {"type": "transformer_masked_language_model", "tokenizer_name": str(folder), "config": str(folder)},
        "data_loader": {"batch_size": 4, "shuffle": False},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 1e-4}, "progress_bar": False,
                    "checkpoint_format": args_format, "callbacks": [{"type": "bench_sharding_probe"}]},
    }


def train(config: dict, folder: Path, name: str, workers: int) -> list[dict]:
    """One epoch (5 steps of a global batch of 4) on ``workers`` processes; each rank's figures."""
    config = json.loads(json.dumps(config))
    config["data_loader"]["batch_size"] = 4 // workers
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers, "strategy": {"type": "fsdp"}}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(config))
    out = folder / f"{name}_figures"
    env = environment(BENCH_SHARDING_OUT=str(out), HF_HUB_OFFLINE="1", DISTRAIN_CACHE=str(folder / "cache"),
                      OMP_NUM_THREADS="1")
    if workers == 1:  # glibc's default policy for the reference (see the module docstring)
        env["GLIBC_TUNABLES"] = ":".join(filter(None, [os.environ.get("GLIBC_TUNABLES"), "glibc.malloc.perturb=0"]))
    run_distrain(["train", path, "-s", folder / name, "--force", "--include-package", "bench_sharding"], env,
                 what=name, timeout=1800)
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(workers)]


def mib(count: int) -> str:
    return f"{count / 2**20:,.1f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--checkpoint-format", choices=["full", "sharded"], default="full",
                        help="what the epoch-end checkpoint of both runs writes")
    parser.add_argument("--quick", action="store_true", help="1 layer of 64, the 2 FSDP ranks only: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.layers, args.hidden = 1, 64
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        config = write_inputs(folder / "bert", args.layers, args.hidden, args.checkpoint_format)
        one = None if args.quick else train(config, folder, "one", 1)[0]
        two = train(config, folder, "fsdp2", 2)
    state = lambda figures: figures["parameters"] + figures["gradients"] + figures["optimizer"]  # noqa: E731
    if one is None:  # quick: no one-process reference to compare with
        for rank, figures in enumerate(two):
            print(f"fsdp rank {rank}: {figures['parameter_count']:,} parameters held, state {mib(state(figures))}, "
                  f"peak RSS {mib(figures['peak_rss'])}")
        print(f"fsdp2_state_bytes={max(state(f) for f in two)}")
        return
    print(f"model: {one['parameter_count']:,} parameters, AdamW; 1 process vs 2 FSDP ranks (gloo, CPU)")
    print(f"1 process : state {mib(state(one))} (parameters {mib(one['parameters'])}, gradients "
          f"{mib(one['gradients'])}, optimizer {mib(one['optimizer'])}), peak RSS {mib(one['peak_rss'])}"
          f" (after set-up {mib(one['peak_rss_setup'])}, after step 1 {mib(one['peak_rss_first_step'])}, "
          f"before the checkpoint {mib(one['peak_rss_before_checkpoint'])})")
    for rank, figures in enumerate(two):
        role = "loads the model, scatters shards" if rank == 0 else "never holds the whole model"
        print(f"fsdp rank {rank}: state {mib(state(figures))} ({state(figures) / state(one):.3f} of 1 process), "
              f"peak RSS {mib(figures['peak_rss'])} ({figures['peak_rss'] / one['peak_rss']:.3f} of 1 process; {role}; "
              f"after set-up {mib(figures['peak_rss_setup'])}, after step 1 {mib(figures['peak_rss_first_step'])}, "
              f"before the checkpoint {mib(figures['peak_rss_before_checkpoint'])})")
    floor = (one["peak_rss_setup"] - one["parameters"] + state(one) / 2) / one["peak_rss"]
    print(f"half_state_floor={floor:.3f} (what a rank holding exactly half the state, and nothing gathered, would"
          " reach: the memory before the model, from one process's set-up, plus half its state)")
    print(f"peak_rss_ratio_loading_rank={two[0]['peak_rss'] / one['peak_rss']:.3f}")
    print(f"peak_rss_ratio_nonloading_rank={two[1]['peak_rss'] / one['peak_rss']:.3f}")
    print(f"memory_ratio_fsdp2={max(state(f) for f in two) / state(one):.3f}")


if __name__ == "__main__":
    main()
