"""One forward + backward of a causal LM step per precision mode, timed in one process (no trainer, no
optimizer): where a bfloat16 step's time goes on this machine.

The model is ``configs/shakespeare_llama.jsonnet``'s tiny Llama (2 layers x 128, 4 heads, 2 key-value
heads, the 30,522-id vocabulary, tied embeddings), built as ``causal_language_model`` builds it, on
16 x 128 random token ids. Each mode is ``PRECISION:CHUNK``:

- ``fp32``: float32;
- ``amp``: ``torch.autocast("cpu", torch.bfloat16)`` (``trainer.use_amp``);
- ``cast``: bfloat16 parameters over float32 masters (``trainer.param_dtype: "bfloat16"``,
  :func:`distrain.training.amp.cast_parameters`);

and ``CHUNK`` is ``model.loss_chunk_size`` (0: the plain loss over all logits). The first step of each
mode is not timed; the median and the minimum of ``--repeats`` steps are printed. ``--profile`` prints
torch's profiler table (self CPU time, top ops) of one more step per mode.

    python scripts/bench_precision_step.py --threads 1 fp32:0 fp32:256 cast:256 amp:0
    python scripts/bench_precision_step.py --quick    # a smoke run: every precision on 2 x 32 ids, one step each,
                                                      # of a smaller Llama (QUICK_LLAMA: 2 layers x 32, 2,048 ids)

The last line is ``slowest_vs_fastest=<the slowest mode's median / the fastest's>``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import harness  # noqa: F401 - this checkout's distrain first on the path

TINY_LLAMA = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 128, "num_attention_heads": 4,
              "num_key_value_heads": 2, "intermediate_size": 512, "max_position_embeddings": 128,
              "tie_word_embeddings": True, "vocab_size": 30522}
#: --quick's model: the same code paths (2 layers, grouped key-value heads, tied embeddings) in a fraction of the time
QUICK_LLAMA = {**TINY_LLAMA, "hidden_size": 32, "num_attention_heads": 2, "num_key_value_heads": 1,
               "intermediate_size": 64, "vocab_size": 2048}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("modes", nargs="*", help="PRECISION:CHUNK, PRECISION one of fp32, amp, cast")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--quick", action="store_true", help="fp32:0 fp32:256 cast:256 amp:0 on 2 x 32 ids, 1 step each, "
                        "of a smaller Llama (2 x 32, 2,048 ids): a smoke run")
    args = parser.parse_args()
    shape, settings = (16, 128), TINY_LLAMA
    if args.quick:
        args.modes, args.repeats, shape = args.modes or ["fp32:0", "fp32:256", "cast:256", "amp:0"], 1, (2, 32)
        settings = QUICK_LLAMA
    if not args.modes:
        parser.error("the following arguments are required: modes")

    import torch

    from distrain.data.vocabulary import Vocabulary
    from distrain.models.causal_language_model import CausalLanguageModel
    from distrain.training.amp import cast_parameters

    torch.set_num_threads(args.threads)
    ids = torch.randint(0, settings["vocab_size"], shape, generator=torch.Generator().manual_seed(0))
    medians = {}
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"oneDNN bfloat16 {torch.ops.mkldnn._is_mkldnn_bf16_supported()}, {args.threads} thread(s)", flush=True)
    for mode in args.modes:
        precision, _, chunk = mode.partition(":")
        if precision not in ("fp32", "amp", "cast"):
            parser.error(f"unknown precision {precision!r} in {mode!r}")
        torch.manual_seed(0)
        model = CausalLanguageModel(Vocabulary(), config=settings, loss_chunk_size=int(chunk or 0) or None)
        if precision == "cast":
            cast_parameters(model, "bfloat16")

        def step() -> float:
            with torch.autocast("cpu", torch.bfloat16, enabled=precision == "amp"):
                loss = model(input_ids=ids, labels=ids)["loss"]
            loss.backward()
            model.zero_grad(set_to_none=True)
            return float(loss.detach())

        loss = step()
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            step()
            times.append(time.perf_counter() - started)
        medians[mode] = statistics.median(times)
        print(f"{mode}: loss {loss:.4f}, median {statistics.median(times):.3f} s, min {min(times):.3f} s", flush=True)
        if args.profile:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU]) as profiled:
                step()
            print(profiled.key_averages().table(sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=40))
    print(f"slowest_vs_fastest={max(medians.values()) / min(medians.values()):.2f}")


if __name__ == "__main__":
    main()
