"""``distrain predict --predictor NAME``: AllenNLP's ``allennlp predict``, one process, the named predictor's JSON.

Inputs are read and checked first, every one of them (a line that is not JSON, or lacks a key the predictor reads, is
one line naming ``file:line`` and the key), then predicted ``--batch-size`` at a time (AllenNLP's default: one), and
the output file is written whole, or not at all.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def predict_with_predictor(args: argparse.Namespace) -> int:
    from distrain import plugins
    from distrain.predictors.predictor import Predictor
    from distrain.data.reader import DataError
    from distrain.errors import UsageError
    from distrain.experiment.archive.format import ArchiveError
    from distrain.job.disk import write_text_atomically

    batch_size = 1 if args.batch_size is None else args.batch_size
    if batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, got {args.batch_size}")
    if not Path(args.archive).is_file():
        raise ArchiveError(f"{args.archive}: archive not found")
    if not Path(args.data).is_file():
        raise DataError(f"{args.data}: input file not found")
    plugins.import_plugins(args.include_package)
    known = Predictor.list_available()
    if args.predictor not in known:
        raise UsageError(f"--predictor {args.predictor}: no predictor of that name (known: {', '.join(known)})")
    predictor = Predictor.from_path(args.archive, args.predictor, dataset_reader_to_load=args.dataset_reader_choice,
                                    import_plugins=False, overrides=args.overrides or "")
    if args.use_dataset_reader:
        inputs, answer = list(predictor._dataset_reader.read(args.data)), predictor.predict_batch_instance
    elif predictor.one_instance_per_input:
        inputs = _inputs_of_lines(predictor, predictor._json_to_instance, Path(args.data))
        answer = predictor.predict_batch_instance
    else:  # an input that is several instances (one per predicate) is answered whole, as AllenNLP's predict does
        inputs = _inputs_of_lines(predictor, _validated(predictor), Path(args.data))
        answer = predictor.predict_batch_json
    lines = []
    for start in range(0, len(inputs), batch_size):
        lines.extend(predictor.dump_line(output) for output in answer(inputs[start:start + batch_size]))
    write_text_atomically(args.output_file, "".join(lines))
    print(f"wrote {len(lines)} predictions to {args.output_file}")
    return 0


def _validated(predictor):
    """The input itself, once the predictor has checked it can answer it."""
    def validated(json_dict):
        predictor.validate_json(json_dict)
        return json_dict
    return validated


def _inputs_of_lines(predictor, prepare, path: Path) -> list:
    """Every non-blank line of ``path`` through ``prepare`` (to the predictor's instance, or its input checked); the
    first bad one is a :class:`DataError`."""
    from distrain.data.reader import DataError, RecordError

    inputs = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                inputs.append(prepare(predictor.load_line(line)))
            except json.JSONDecodeError as error:
                raise DataError(f"{path}:{number}: not a JSON input ({error.msg} at column {error.colno})") from None
            except (RecordError, KeyError, TypeError) as error:
                reason = error.args[0] if isinstance(error, RecordError) else f"{type(error).__name__}: {error}"
                raise DataError(f"{path}:{number}: {reason}") from None
    return inputs
