"""``distrain predict ARCHIVE DATA --output-file F``: one JSON line per input, in input order.

``--predictor NAME`` answers as that registered predictor does (AllenNLP's ``allennlp predict``): each line of DATA
is a JSON input the predictor reads (``--use-dataset-reader``: DATA is read by the archive's reader instead), and
each output line is the predictor's ``dump_line``. Without it, the archive's reader reads DATA and the workers
of the archive's ``distributed`` block predict it.
"""

from __future__ import annotations

import argparse

from distrain.commands.arguments import add_archive_data_arguments, load_archive_job_from_args, run_archive_job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_archive_data_arguments(parser, "one JSON line per input, in input order")
    parser.add_argument("--predictor", default=None,
                        help="answer as this registered predictor (AllenNLP's text_classifier, sentence_tagger, ...): "
                             "DATA holds one JSON input per line")
    parser.add_argument("--use-dataset-reader", action="store_true",
                        help="with --predictor: read DATA with the archive's dataset reader, not as JSON lines")
    parser.add_argument("--dataset-reader-choice", choices=("validation", "train"), default="validation",
                        help="with --predictor: which of the archive's readers reads inputs")


def run(args: argparse.Namespace) -> int:
    if args.predictor is not None:
        from distrain.commands.predict_with_predictor import predict_with_predictor

        return predict_with_predictor(args)
    if args.use_dataset_reader:
        from distrain.errors import UsageError

        raise UsageError("--use-dataset-reader goes with --predictor (without it, the archive's reader reads DATA)")
    job = load_archive_job_from_args(args, predicting=True)
    if job.distributed is not None and job.distributed.pipeline_parallel_size > 1:
        from distrain.errors import UsageError

        raise UsageError("distributed.pipeline_parallel_size: predict does not run a pipelined model (its stages "
                         "return a loss, not outputs); use tensor_parallel_size, data parallel workers or one process")
    from distrain.experiment.archive.jobs import predict_worker

    run_archive_job(job, predict_worker, args.output_file)
    print(f"wrote {len(job.dataset)} predictions to {args.output_file}")
    return 0
