"""The decode step with and without padding: the model alone, the padded running batch against the slot batch
(with its linears on packed weights, and without: ``slots_unpacked``; with its decoding rows attending through the
C++ loop, through the Inductor loop: ``slots_inductor_attention``, and eagerly through torch's SDPA:
``slots_eager_attention``).

bench_generate's workload without the server: ``--requests`` (32) requests, prompts of 8 to 128 tokens and
16 to 128 new tokens (drawn with a fixed seed; the token ids are random: what is measured is the cost per
token, and no row stops before its budget, so both variants do the same work), greedy, float32 (``--dtype
bfloat16``: the model cast), one torch thread, on ``bench_llm``'s ``LLAMA_40M`` with random init (8 layers of width 512, the 30,522-id
vocabulary). Two workloads, each variant in turn in every round (``--rounds``, default 3) in this process, so
drift on a shared machine hits both alike:

- ``static``: all requests admitted at once, run until the last ends (``bench_generate``'s ``model_alone``);
- ``continuous``: twice as many requests through :class:`~distrain.generation.admission.Admissions`
  (batch of at most ``--requests`` rows): each finished row is replaced by the next request.

Per variant and workload: generated tokens/s (median and range over rounds). Then, from one profiled
``static`` run of each variant, the step's self CPU time split into attention (the SDPA kernels), matmuls
(linear/mm/bmm, oneDNN's packed linear), cache bookkeeping (cat, index, copy, fill, slicing) and the rest.
``slots_packed_vs_unpacked=``, ``slots_compiled_vs_eager_attention=`` and ``slots_ragged_vs_inductor_attention=`` (the
C++ loop over each row's own length against the Inductor loop over the longest row's) are medians of the per-round
static ratios.
Last line:
``slots_vs_padded=<median over rounds of slot tokens/s / padded tokens/s, static>``.

    python scripts/bench_slots.py            # LLAMA_40M, 32 requests, 3 rounds
    python scripts/bench_slots.py --quick    # LLAMA_TINY, 6 requests of 4-8 new tokens, 1 round, no profile
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

VARIANTS = ("padded", "slots", "slots_unpacked", "slots_eager_attention", "slots_inductor_attention")
ATTENTION = ("scaled_dot_product", "_flash_attention", "softmax", "baddbmm", "CompiledFxGraph", "ragged_decode_attention")
MATMUL = ("aten::linear", "aten::addmm", "aten::mm", "aten::bmm", "aten::matmul", "mkldnn::_linear_pointwise")
BOOKKEEPING = ("aten::cat", "aten::index", "aten::index_put", "aten::index_copy", "aten::copy_", "aten::zeros",
               "aten::new_zeros", "aten::fill_", "aten::slice", "aten::select", "aten::pad", "aten::constant_pad_nd",
               "aten::empty", "aten::masked_fill", "aten::cumsum", "aten::arange", "aten::lt", "aten::le", "aten::ge")


def build_model(architecture: dict, vocabulary: int = 30522):
    import torch
    import transformers

    torch.manual_seed(0)
    fields = {key: value for key, value in architecture.items() if key != "model_type"}
    config = transformers.AutoConfig.for_model(architecture["model_type"], **fields, vocab_size=vocabulary,
                                               max_position_embeddings=512, pad_token_id=0)
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def workload(count: int, vocabulary: int, prompt: tuple[int, int], new: tuple[int, int], seed: int = 0):
    """(prompt ids, new tokens) of ``count`` requests."""
    rng = random.Random(seed)
    return [([rng.randrange(1, vocabulary) for _ in range(rng.randint(*prompt))], rng.randint(*new))
            for _ in range(count)]


def requests(work):
    from distrain.generation.decoding import GenerationSettings, Request

    return [Request(list(ids), GenerationSettings(max_new_tokens=new), number) for number, (ids, new) in enumerate(work)]


def make_batch(model, variant: str):
    """``padded``, ``slots``, ``slots_unpacked`` (the slot batch with torch's own linear: no packed weights),
    ``slots_eager_attention`` (the decoding rows through torch's SDPA, not a compiled kernel) or
    ``slots_inductor_attention`` (through the Inductor loop, as where the C++ loop cannot be built)."""
    from distrain.generation import ragged_attention
    from distrain.generation.decoding import batch_class

    if variant == "slots_unpacked":
        return batch_class("slots")(model, set(), 0, 512, packed_linears=False)
    if variant == "slots_eager_attention":
        return batch_class("slots")(model, set(), 0, 512, compiled_attention=False)
    if variant == "slots_inductor_attention":
        built, ragged_attention.kernel = ragged_attention.kernel, lambda: None
        try:
            return batch_class("slots")(model, set(), 0, 512, compiled_attention=True)
        finally:
            ragged_attention.kernel = built
    return batch_class(variant)(model, set(), 0, 512)


def run_static(model, variant: str, work) -> tuple[float, list]:
    import torch

    rows = requests(work)
    batch = make_batch(model, variant)
    started = time.perf_counter()
    with torch.inference_mode():
        batch.admit(rows)
        while len(batch):
            batch.step()
    return sum(len(row.tokens) for row in rows) / (time.perf_counter() - started), rows


def run_continuous(model, variant: str, work, rows_at_most: int) -> float:
    from distrain.generation.admission import Admissions, Limits

    rows = requests(work)
    scheduler = Admissions(make_batch(model, variant), Limits(max_batch_size=rows_at_most))
    for row in rows:
        scheduler.submit(row)
    started = time.perf_counter()
    while not scheduler.idle:
        scheduler.step()
    return sum(len(row.tokens) for row in rows) / (time.perf_counter() - started)


def profile_split(model, variant: str, work) -> dict[str, float]:
    """Self CPU seconds of one static run, by kind of op."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        run_static(model, variant, work)
    split = {"attention": 0.0, "matmul": 0.0, "bookkeeping": 0.0, "other": 0.0}
    for event in profiler.key_averages():
        seconds = event.self_cpu_time_total / 1e6
        name = event.key
        kind = ("attention" if any(part in name for part in ATTENTION) else
                "matmul" if name in MATMUL else
                "bookkeeping" if any(name.startswith(part) for part in BOOKKEEPING) else "other")
        split[kind] += seconds
    return split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32",
                        help="the model's dtype (default float32; greedy tokens are compared in float32 only)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as a server's decode thread)")
    parser.add_argument("--no-profile", action="store_true", help="skip the profiled split of the step")
    parser.add_argument("--quick", action="store_true", help="LLAMA_TINY, 6 requests of 4-8 new tokens, 1 round, "
                        "no continuous workload, no profile: a smoke run")
    args = parser.parse_args()
    import torch

    from bench_llm import LLAMA_40M, LLAMA_TINY

    torch.set_num_threads(args.threads)
    architecture, new = LLAMA_40M, (16, 128)
    if args.quick:
        architecture, new, args.requests, args.rounds, args.no_profile = LLAMA_TINY, (4, 8), 6, 1, True
    model = build_model(architecture).to(getattr(torch, args.dtype))
    work = workload(args.requests, model.config.vocab_size, (8, 128), new)
    more = workload(2 * args.requests, model.config.vocab_size, (8, 128), new, seed=1)
    print(f"model={'LLAMA_TINY' if args.quick else 'LLAMA_40M'} requests={args.requests} prompts 8-128, "
          f"new tokens {new[0]}-{new[1]}, greedy {args.dtype}, threads={args.threads}, rounds={args.rounds}", flush=True)
    alone = {variant: run_static(model, variant, work[:2])[1] for variant in VARIANTS}  # warm-up, and a check
    static, continuous = {v: [] for v in VARIANTS}, {v: [] for v in VARIANTS}
    same = True
    for _ in range(args.rounds):
        for variant in VARIANTS:
            rate, rows = run_static(model, variant, work)
            static[variant].append(rate)
            alone[variant] = rows
            if not args.quick:
                continuous[variant].append(run_continuous(model, variant, more, args.requests))
        same = same and all([row.tokens for row in alone["padded"]] == [row.tokens for row in alone[variant]]
                            for variant in VARIANTS)
    for name, rates in (("static", static), ("continuous", continuous)):
        for variant in VARIANTS:
            if rates[variant]:
                values = rates[variant]
                print(f"{name} {variant}: tokens_per_s={statistics.median(values):.1f} "
                      f"[{min(values):.1f}-{max(values):.1f}]", flush=True)
    if args.dtype == "float32":
        print(f"greedy tokens equal, {', '.join(VARIANTS)}: {same}")
    if not args.no_profile:
        for variant in VARIANTS:
            split = profile_split(model, variant, work)
            total = sum(split.values())
            print(f"profile static {variant}: total_self_cpu_s={total:.2f} " +
                  " ".join(f"{kind}={seconds:.2f}s({100 * seconds / total:.0f}%)" for kind, seconds in split.items()),
                  flush=True)
    ratios = [s / p for s, p in zip(static["slots"], static["padded"])]
    if continuous["slots"]:
        ratios_c = [s / p for s, p in zip(continuous["slots"], continuous["padded"])]
        print(f"per-round slots/padded static: {' '.join(f'{r:.2f}' for r in ratios)}; "
              f"continuous: {' '.join(f'{r:.2f}' for r in ratios_c)}")
        print(f"continuous_slots_vs_padded={statistics.median(ratios_c):.2f}")
    packed = [s / u for s, u in zip(static["slots"], static["slots_unpacked"])]
    print(f"per-round slots/slots_unpacked static: {' '.join(f'{r:.2f}' for r in packed)}")
    print(f"slots_packed_vs_unpacked={statistics.median(packed):.2f}")
    compiled = [s / e for s, e in zip(static["slots"], static["slots_eager_attention"])]
    print(f"per-round slots/slots_eager_attention static: {' '.join(f'{r:.2f}' for r in compiled)}")
    print(f"slots_compiled_vs_eager_attention={statistics.median(compiled):.2f}")
    ragged = [s / i for s, i in zip(static["slots"], static["slots_inductor_attention"])]
    print(f"per-round slots/slots_inductor_attention static: {' '.join(f'{r:.2f}' for r in ragged)}")
    print(f"slots_ragged_vs_inductor_attention={statistics.median(ragged):.2f}")
    print(f"slots_vs_padded={statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
