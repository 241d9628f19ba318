"""``distrain serve ARCHIVE``: the model behind HTTP, with dynamic request batching and a demo page.

``POST /predict`` takes one record (a line of ``distrain predict``'s input) and answers that line of
its output; ``/predict_batch`` a list. A causal-LM archive generates with continuous batching and
also answers OpenAI's ``/v1/completions``, ``/v1/chat/completions`` and ``/v1/models``. ``/health``, ``/ready``, ``/metrics`` (Prometheus), ``/info``
and the demo page at ``/``. Needs the ``serve`` extra (``pip install 'distrain[serve]'``).
"""

from __future__ import annotations

import argparse

from distrain.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from distrain.serving.dtype import DTYPES

    parser.add_argument("archive", help="model.tar.gz written by distrain train")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1; keep it unless --api-key is set)")
    parser.add_argument("--api-key", default=None, metavar="KEY",
                        help="every route but /health and the demo page needs 'Authorization: Bearer KEY', else 401 "
                             "(default: the DISTRAIN_API_KEY environment variable, which other users cannot read "
                             "from the process list; unset: no key)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on; 0 picks a free one (default 8000)")
    parser.add_argument("--port-file", default=None, metavar="F", help="write the port listened on to F once bound")
    parser.add_argument("--max-batch-size", type=int, default=32, help="requests per batch at most (default 32)")
    parser.add_argument("--max-prefill-tokens", type=int, default=2048, metavar="N",
                        help="language models: prompt tokens prefilled per decode step at most; the first waiting "
                             "request always joins an empty batch (default 2048)")
    parser.add_argument("--max-cached-tokens", type=int, default=None, metavar="N",
                        help="language models: key-value positions the running batch may cache at most (rows x "
                             "longest, padding included); default no cap")
    parser.add_argument("--batching", choices=("continuous", "static"), default="continuous",
                        help="language models: continuous (requests join the running batch at every decode step) or "
                             "static (a batch runs until all its rows end before the next forms; for comparison)")
    parser.add_argument("--model-name", default=None, metavar="NAME",
                        help="language models: the model id GET /v1/models lists (default: the archive's file name)")
    parser.add_argument("--torch-threads", type=int, default=None, metavar="N",
                        help="language models: torch's intra-op threads (default: the cores less one, leaving one "
                             "to the HTTP event loop)")
    parser.add_argument("--max-batch-tokens", type=int, default=None, metavar="N",
                        help="padded tokens (count x longest) per batch at most; the oldest request always runs")
    parser.add_argument("--max-padding", type=float, default=0.1, metavar="F",
                        help="padded tokens per real token a batch may carry at most; requests of other lengths "
                             "wait for the next batch (default 0.1; -1 turns the cap off)")
    parser.add_argument("--max-wait-ms", type=float, default=0.0,
                        help="how long a batch may wait to fill; 0 (default) takes what queued while the last batch ran")
    parser.add_argument("--max-queue", type=int, default=256,
                        help="waiting requests at most; beyond it requests get 503 with Retry-After (default 256)")
    parser.add_argument("--request-timeout-s", type=float, default=30.0,
                        help="a request still waiting after this long gets 504 and is never computed (default 30)")
    parser.add_argument("--max-request-bytes", type=int, default=1_048_576, help="larger bodies get 413 (default 1 MiB)")
    parser.add_argument("--drain-timeout-s", type=float, default=30.0,
                        help="on SIGTERM/Ctrl-C, how long to answer what is queued before exiting anyway (default 30)")
    parser.add_argument("--dtype", choices=DTYPES, default=None,
                        help="cast the model's weights once at load and compute in this type (default: the "
                             "archive's, float32 as trained); bfloat16 halves the weights' memory and is fast "
                             "where the CPU has bfloat16 matrix units (AMX, AVX-512 BF16) or on a GPU")
    parser.add_argument("--decode-attention", choices=("auto", "compiled", "eager"), default="auto",
                        help="language models: how the decoding rows attend: through a loop torch.compile builds at "
                             "start (seconds, once per dtype), or eagerly (torch's SDPA); auto (default): compiled on "
                             "CPU for attention 256 or more wide (heads x head size), else eager")
    parser.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                        help="split a language model over N local CPU processes with its tensor-parallel plan; "
                             "this process serves HTTP and drives every step (default 1)")
    parser.add_argument("--predictor", default=None, metavar="NAME",
                        help="answer /predict as this registered predictor does (AllenNLP's text_classifier, "
                             "sentence_tagger, ...): its JSON in, its outputs out")
    parser.add_argument("-o", "--overrides", default=None, help="JSON merged into the archived config")
    parser.add_argument("--include-package", action="append", default=[], metavar="MODULE",
                        help="import MODULE first so its registered components exist (repeatable)")


def options_from_args(args: argparse.Namespace):
    from distrain.serving.app import ServeOptions

    at_least_one = {"--max-batch-size": args.max_batch_size, "--max-queue": args.max_queue,
                    "--max-request-bytes": args.max_request_bytes, "--max-prefill-tokens": args.max_prefill_tokens}
    if args.torch_threads is not None:
        at_least_one["--torch-threads"] = args.torch_threads
    for flag, value in {"--max-batch-tokens": args.max_batch_tokens, "--max-cached-tokens": args.max_cached_tokens}.items():
        if value is not None:
            at_least_one[flag] = value
    for flag, value in at_least_one.items():
        if value < 1:
            raise UsageError(f"{flag} must be at least 1, got {value}")
    for flag, value in {"--request-timeout-s": args.request_timeout_s, "--drain-timeout-s": args.drain_timeout_s}.items():
        if not value > 0:
            raise UsageError(f"{flag} must be positive, got {value}")
    if args.max_padding < 0 and args.max_padding != -1:
        raise UsageError(f"--max-padding must be at least 0 (or -1: no cap), got {args.max_padding}")
    if args.max_wait_ms < 0:
        raise UsageError(f"--max-wait-ms must not be negative, got {args.max_wait_ms}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {args.port}")
    api_key = api_key_from(args)
    return ServeOptions(
        max_batch_size=args.max_batch_size, max_batch_tokens=args.max_batch_tokens, max_wait_ms=args.max_wait_ms,
        max_padding=None if args.max_padding == -1 else args.max_padding,
        max_queue=args.max_queue, request_timeout_s=args.request_timeout_s,
        max_request_bytes=args.max_request_bytes, drain_timeout_s=args.drain_timeout_s,
        max_prefill_tokens=args.max_prefill_tokens, max_cached_tokens=args.max_cached_tokens, model_name=args.model_name,
        static_batching=args.batching == "static", torch_threads=args.torch_threads, api_key=api_key,
        dtype=args.dtype, decode_attention=args.decode_attention,
    )


def api_key_from(args: argparse.Namespace) -> str | None:
    """``--api-key``, else ``DISTRAIN_API_KEY``, else None; one that cannot travel in a header is refused."""
    import os

    from distrain.serving.auth import key_problem

    flag, key = "--api-key", args.api_key
    if key is None:
        flag, key = "DISTRAIN_API_KEY", os.environ.get("DISTRAIN_API_KEY")
    if key is None:
        return None
    problem = key_problem(key)
    if problem:
        raise UsageError(f"{flag} {problem}")
    return key


def warn_if_slow_bfloat16() -> None:
    """bfloat16 pays only where the CPU multiplies it natively; elsewhere say so once, at load."""
    import sys

    import torch

    from distrain.generation.packed_linears import cpu_packs

    if not cpu_packs(torch.bfloat16):
        print("warning: --dtype bfloat16: this CPU has no bfloat16 matrix instructions (AVX-512 BF16, AMX), so "
              "the model computes several times slower than in float32 here; it still halves the weights' memory",
              file=sys.stderr, flush=True)


LOOPBACK = ("127.", "::1", "localhost")


def warn_if_open(host: str, api_key: str | None) -> None:
    """A server reachable from other machines without a key answers anyone who finds its port."""
    import sys

    if api_key is None and not host.startswith(LOOPBACK):
        print(f"warning: listening on {host} without --api-key: anyone who can reach this port can use the model "
              "(set --api-key or DISTRAIN_API_KEY, or keep the default 127.0.0.1)", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from distrain.experiment.archive.format import ArchiveError
    from distrain.config.loading import parse_overrides

    options = options_from_args(args)
    if not Path(args.archive).is_file():
        raise ArchiveError(f"{args.archive}: archive not found")
    overrides = parse_overrides(args.overrides)
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as error:
        raise UsageError(f"distrain serve needs the serve extra ({error.name} is missing): pip install 'distrain[serve]'") from None
    from distrain.plugins import import_plugins
    from distrain.serving.predictor import Predictor
    from distrain.serving.server import run_server

    import_plugins(args.include_package)
    if args.predictor is not None:
        from distrain.predictors.predictor import Predictor as JsonPredictor

        if args.predictor not in JsonPredictor.list_available():
            raise UsageError(f"--predictor {args.predictor}: no predictor of that name "
                             f"(known: {', '.join(JsonPredictor.list_available())})")
    if args.tensor_parallel < 1:
        raise UsageError(f"--tensor-parallel must be at least 1, got {args.tensor_parallel}")

    def load() -> Predictor:
        predictor = Predictor.from_archive(args.archive, overrides, dtype=args.dtype, predictor_name=args.predictor)
        if args.dtype == "bfloat16" and predictor.generates:
            warn_if_slow_bfloat16()
        if args.tensor_parallel > 1:
            from distrain.experiment.archive.jobs import tensor_parallel_config
            from distrain.serving.followers import Followers

            if not predictor.generates:
                raise UsageError("--tensor-parallel serves language models; this archive's model "
                                 f"({type(predictor.model).__name__}) answers on one process")
            from distrain.distributed.tensor_parallel import plan_problems

            tensor_parallel_config(args.tensor_parallel)
            problems = plan_problems(predictor.model, args.tensor_parallel, None)  # named before anyone starts
            if problems:  # the model's own sizes say it shortest; each layer they stop is then no news
                messages = [problem.message for problem in problems]
                messages = [message for message in messages if "the model's" in message] or messages
                raise UsageError(f"--tensor-parallel {args.tensor_parallel}: " + "; ".join(messages))
            predictor.split_over(Followers(args.tensor_parallel, args.archive, overrides, args.include_package,
                                            args.dtype))
        return predictor

    warn_if_open(args.host, options.api_key)
    return run_server(args.archive, load, options, host=args.host, port=args.port, port_file=args.port_file)
