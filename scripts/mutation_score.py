"""Mutation testing as the measure of the pure modules' tests: how many of mutmut's mutants their tests kill.

A line that every test runs can still be checked by none: coverage cannot tell. mutmut (3.x, PyPI) makes many small
mutants of each function (``<`` for ``<=``, ``+ 1`` for ``- 1``, a string or a default changed, an argument dropped)
and runs the tests that call the function against each; a mutant whose tests all pass *survived*. This script runs
it over the pure modules (metrics, the global batch's arithmetic, the vocabulary, the samplers, the CRF, Viterbi, the
span and tree utilities, beam search, ``config/``), each with only the tests that cover it (``MODULES`` below, no
training runs, no CLI processes), in a scratch copy of this checkout (the real tree is never touched), and prints
for each module the mutants killed, survived and listed as equivalent, and its score: killed / (all - equivalent).

A mutant that no test could kill because it does not change behaviour (a default that is never used, ``<`` for
``<=`` where the two values are never equal) is listed in ``EQUIVALENT`` below with why, keyed by the module, the
function and the mutated line (not mutmut's mutant number, which moves when the code does). Every other survivor
is printed with its diff: a test to write. A timeout or a crash counts as killed (the tests did not pass); a mutant
of a function no selected test calls (mutmut's "no tests") counts as survived.

    .venv/bin/python scripts/mutation_score.py                    # every module (over 30 minutes on 2 cores)
    .venv/bin/python scripts/mutation_score.py --module balance   # one module
    .venv/bin/python scripts/mutation_score.py --list             # the modules, their files and tests

Last line: ``mutation_score=0.xxxx`` (killed / non-equivalent mutants over the modules run). ``--quick`` is a smoke
run of the smallest module (``balance``, under a minute). mutmut is in the ``dev`` extra; it runs its mutants one
at a time here (``--max-children``, default 1).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness import ROOT

PACKAGE = "src/distrain"


@dataclass(frozen=True)
class Module:
    sources: tuple[str, ...]  # under src/distrain (globs)
    tests: tuple[str, ...]  # pytest node ids or files under tests/: the ones that run the module in this process


MODULES: dict[str, Module] = {
    "balance": Module(("distributed/balance.py",), (
        "tests/distributed/test_auto_balance.py::test_proportional_shares_are_integers_summing_to_the_global_batch",
        "tests/distributed/test_auto_balance.py::test_proportional_shares_keep_every_worker_measurable",
        "tests/distributed/test_auto_balance.py::test_next_shares_ignore_changes_within_the_tolerance",
        "tests/distributed/test_auto_balance.py::test_next_shares_move_at_most_max_change_of_the_batch_at_a_time",
        "tests/distributed/test_balance.py",
    )),
    "global_batch": Module(("distributed/global_batch.py",), (
        "tests/distributed/test_global_batch.py::test_a_position_saved_in_one_cut_of_the_global_batches_is_found_in_another",
        "tests/distributed/test_global_batch.py::test_the_fewest_accumulation_steps_whose_micro_batches_are_whole_and_fit",
        "tests/distributed/test_global_batch.py::test_a_global_batch_that_cannot_be_cut_names_the_world_size",
        "tests/distributed/test_global_batch_arithmetic.py",
    )),
    "vocabulary": Module(("data/vocabulary.py",), (
        "tests/data/test_vocabulary.py",
        "tests/data/test_vocabulary_rules.py::test_padded_namespaces_get_padding_and_oov_and_the_default_non_padded_ones_do_not",
        "tests/data/test_vocabulary_rules.py::test_non_padded_namespaces_names_and_suffixes_replace_the_default",
        "tests/data/test_vocabulary_rules.py::test_min_count_and_max_vocab_size_count_only_real_tokens",
        "tests/data/test_vocabulary_rules.py::test_tokens_to_add_are_kept_whatever_their_count_in_a_namespace_of_their_own_too",
        "tests/data/test_vocabulary_rules.py::test_pretrained_files_keep_their_words",
        "tests/data/test_vocabulary_rules.py::test_an_extended_vocabulary_keeps_every_index_and_appends_what_is_new",
        "tests/data/test_vocabulary_rules.py::"
        "test_an_unknown_token_is_oov_even_in_a_namespace_no_data_filled_and_an_unknown_label_is_named",
    )),
    "samplers": Module(("data/sampler.py", "data/batch_sampler.py", "data/batch_samplers/bucket.py"), (
        "tests/data/test_epoch_order.py", "tests/data/test_sampler.py", "tests/data/test_bucket_global_batches.py",
        "tests/data/test_bucket_sampler.py::test_workers_slices_of_each_global_batch_are_the_one_worker_batches",
        "tests/data/test_bucket_sampler.py::test_batches_hold_similar_lengths_and_cover_the_split_once",
        "tests/data/test_bucket_sampler.py::test_padding_noise_is_seeded_by_seed_and_epoch",
        "tests/data/test_bucket_sampler.py::test_a_fields_sub_columns_give_its_length",
        "tests/data/test_bucket_sampler.py::test_unknown_sorting_key_names_the_fields",
        "tests/distributed/test_global_batch.py::test_a_position_saved_in_one_cut_of_the_global_batches_is_found_in_another",
    )),
    "crf": Module(("zoo/tagging/modules/conditional_random_field.py",
                   "zoo/tagging/modules/weighted_conditional_random_field.py"), (
        "tests/modules/test_conditional_random_field.py",
        "tests/modules/test_more_allennlp_modules.py::test_weighted_crfs_match_brute_force",
        "tests/modules/test_crf_transitions.py",
    )),
    "viterbi": Module(("modules/viterbi.py",), (
        "tests/modules/test_conditional_random_field.py",
        "tests/allennlp_names/test_nn_util.py::test_viterbi_decode_finds_the_brute_force_best_paths",
        "tests/modules/test_viterbi.py",
    )),
    "span_tags": Module(("data/span_tags.py",), ("tests/allennlp_names/test_span_utils.py",
                                                 "tests/data/test_span_tags.py")),
    "trees": Module(("zoo/structured_prediction/modules/chu_liu_edmonds.py",
                     "zoo/structured_prediction/models/span_trees.py", "zoo/structured_prediction/trees.py"), (
        "tests/modules/test_chu_liu_edmonds.py", "tests/modules/test_trees.py",
        "tests/allennlp/test_allennlp_constituency_parser.py::"
        "test_overlapping_spans_are_resolved_and_nested_as_allennlp_does",
        "tests/allennlp/test_allennlp_constituency_parser.py::test_a_malformed_tree_is_one_line_naming_file_and_line",
    )),
    "beam_search": Module(("modules/beam_search.py", "modules/beam_sampler.py", "modules/beam_samplers/*.py",
                           "modules/beam_constraint.py", "modules/beam_constraints/*.py"), (
        "tests/modules/test_beam_search.py", "tests/modules/test_beam_search_samplers.py",
        "tests/modules/test_beam_sampler_draws.py",
    )),
    "metrics": Module(("metrics/*.py", "zoo/*/metrics/*.py"), (
        "tests/metrics/test_metrics_distributed.py::test_each_metric_in_one_process_equals_the_reference",
        "tests/metrics/test_metrics_distributed.py::test_conll_coref_scores_muc_b_cubed_and_ceafe_each_equal_scorchs",
        "tests/metrics/test_attachment_scores.py", "tests/metrics/test_fbeta_multi_label.py",
    )),
    "config": Module(("config/*.py",), (
        "tests/config/test_loading.py", "tests/config/test_schema_messages.py", "tests/package/test_registry.py",
        "tests/allennlp_semantics/test_kwargs_config_keys.py",
        "tests/config/test_schema.py::test_every_example_config_is_valid",
        "tests/config/test_schema.py::test_the_good_config_passes_both",
        "tests/config/test_schema.py::test_a_bad_config_is_rejected_by_the_schema_and_by_check",
        "tests/config/test_schema.py::test_constraints_defaults_and_docstrings_come_from_the_signatures",
        "tests/config/test_configs.py::test_shipped_search_space_gives_valid_configs_at_every_corner",
    )),
}

#: (module, function, the mutated line(s) as mutmut writes them) -> why no test can tell the mutant from the code
_CRF, _SPANS = "zoo/tagging/modules/conditional_random_field.py", "data/span_tags.py"
_UNREAD = "the buffer is read only at [:C, :C], [C, :C] and [:C, C + 1]: an extra row or column is never read"
_DEAD_START = "read only by opens(), which is never called while no span is open (the first tag, after an O)"
_SAME_SPANS = ("bio_tags_to_spans and iob1_tags_to_spans cut every sequence alike (iob1's `previous == 'O'` "
               "is never true while a span is open), so which one to_bioul calls changes nothing")
EQUIVALENT: dict[tuple[str, str, str], str] = {
    ("distributed/balance.py", "next_shares", "if step == 2.0:"):
        "step is at most 1; at 1, now + move is the target, whose proportional shares are the target itself",
    ("distributed/balance.py", "next_shares",
     "target = proportional_shares([2.0 / seconds for seconds in seconds_per_sample], total)"):
        "doubling every speed leaves the proportions, and each float product and quotient, exactly as they were",
    ("distributed/global_batch.py", "split_global_batch",
     "weights = [Fraction(share).limit_denominator(10**6) for share in (shares or [2] * workers)]"):
        "equal shares of 2 are equal shares: micro x 2 / (2 x workers) is micro / workers",
    ("distributed/global_batch.py", "split_global_batch", "for accumulation in range(1, global_batch + 2):"):
        "global_batch + 1 never divides global_batch, so the extra accumulation is always skipped",
    ("data/batch_samplers/bucket.py", "BucketBatchSampler.global_batches", "length = lengths(key).astype(None)"):
        "numpy's astype(None) is astype(float64)",
    ("data/batch_samplers/bucket.py", "BucketBatchSampler.global_batches", 'order = np.argsort(length, kind="STABLE")'):
        "numpy reads the sort kind case-insensitively: STABLE is stable",
    ("data/sampler.py", "GlobalBatchSampler.batches",
     '[part[np.argsort(self.lengths[part], kind="STABLE")] for part in np.split(order, range(chunk, self.size, chunk))]'):
        "numpy reads the sort kind case-insensitively: STABLE is stable",
    ("data/sampler.py", "GlobalBatchSampler.batches", ") if (self.size) or True else order"):
        "with no samples the sorted concatenation of the one empty chunk is the empty order itself",
    **{(_CRF, "_split", line): "START and END hold no hyphen: partition('-') gives them the same (label, '') "
       "and is_transition_allowed reads no kind of START or END" for line in (
        'if label in ("XXSTARTXX", "END"):', 'if label in ("start", "END"):', 'if label in ("START", "XXENDXX"):',
        'if label in ("START", "end"):', 'return label, "XXXX"')},
    **{(_CRF, "is_transition_allowed", line): "START is in no scheme's first, inside or last tags, so the rules "
       "below refuse a transition into it anyway" for line in (
        'if to_tag == "XXSTARTXX" or from_tag == "END":', 'if to_tag == "start" or from_tag == "END":')},
    **{(_CRF, "ConditionalRandomField.__init__", f"allowed = torch.{fill}(num_tags + {rows}, num_tags + {columns})"):
       _UNREAD for fill in ("ones", "zeros") for rows, columns in ((3, 2), (2, 3))},
    (_CRF, "ConditionalRandomField._gold_score", "mask = mask.to(None)"):
        "to(None) keeps the bool mask, which multiplies and sums as the float one does",
    (_CRF, "ConditionalRandomField.viterbi_tags",
     "blocked = (1.0 - self._allowed) * -10001.0  # large, but finite: an all-blocked row still decodes"):
        "any large penalty: an allowed path still beats every blocked one and its score holds no penalty",
    **{(_SPANS, "_chunks", line): _DEAD_START for line in (
        'open_span, previous = None, ("XXOXX", label)', 'open_span, previous = None, ("o", label)',
        "previous = None", 'previous = ("XXOXX", "")', 'previous = ("o", "")', 'previous = ("O", "XXXX")')},
    **{(_SPANS, "iob1_tags_to_spans", f'lambda prefix, label, previous, previous_label: prefix == "B" or previous == "{o}"'):
       _DEAD_START + ", so previous is never O there" for o in ("XXOXX", "o")},
    (_SPANS, "bmes_tags_to_spans", 'previous = ""'): "None and '' are both outside ('B', 'M'): the first tag opens",
    (_SPANS, "to_bioul", 'previous = ("O", "XXXX")'):
        "the first tag is refused when it is I whatever the label: previous[0] is O already",
    (_SPANS, "to_bioul", 'prefix, label = _split(tag, "XXBIOXX", tag_sequence)'):
        "a tag the BIO check lets through is refused by bio_tags_to_spans with the same InvalidTagSequence",
    **{(_SPANS, "to_bioul", f"spans = (bio_tags_to_spans if {test} else iob1_tags_to_spans)(tag_sequence)"): _SAME_SPANS
       for test in ('(encoding == "BIO") and False', '(encoding == "BIO") or True', 'encoding != "BIO"',
                    'encoding == "XXBIOXX"', 'encoding == "bio"')},
}

KILLED = {1, 3, -11, -9, 24, -24, 36, 152, 255}  # a test failed, pytest broke, or the mutant crashed or hung
SURVIVED = {0, 5, 33}  # every test passed, or no selected test calls the function


def scratch_copy(destination: Path, module: Module) -> None:
    """This checkout's source, tests and scripts, its pyproject.toml told which files mutmut mutates and which tests
    it runs (one pytest process: no xdist, no cache)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "mutants")
    for part in ("src", "tests", "configs", "scripts"):
        if (ROOT / part).is_dir():
            shutil.copytree(ROOT / part, destination / part, ignore=ignore)
    text = (ROOT / "pyproject.toml").read_text()
    text = re.sub(r'(?m)^addopts = .*$', 'addopts = "-q -p no:cacheprovider"', text)
    text = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", text)
    settings = {
        "source_paths": ["src"],
        "only_mutate": [f"{PACKAGE}/{pattern}" for pattern in module.sources],
        "pytest_add_cli_args_test_selection": list(module.tests),
        "pytest_add_cli_args": ["-p", "no:xdist", "-x"],
        "also_copy": ["configs", "scripts"],
        "use_git_change_detection": False,
    }
    text += "\n[tool.mutmut]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())
    (destination / "pyproject.toml").write_text(text)


def mutated_files(copy: Path, module: Module) -> list[str]:
    """The module's files, relative to the copy (mutmut's own names for them)."""
    found = {str(path.relative_to(copy)) for pattern in module.sources for path in (copy / PACKAGE).glob(pattern)}
    return sorted(path for path in found if not path.endswith("__init__.py") or (copy / path).stat().st_size)


def run_mutmut(copy: Path, children: int, timeout: float) -> tuple[int, str]:
    # the caller's PYTHONPATH would shadow the copy's tree, its PYTEST_ADDOPTS (a test run's --junitxml, -n) would
    # reach mutmut's own pytest runs, and CI's DISTRAIN_TESTS_STRICT would stop them: the scratch copy has no
    # ../shared fixtures beside it, which the pure modules' tests do not read
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "PYTEST_ADDOPTS", "DISTRAIN_TESTS_STRICT")}
    environment.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HF_HUB_OFFLINE="1", DISTRAIN_CURVES="off",
                       PYTHONPATH=str(copy / "tests" / "plugins"), DISTRAIN_CACHE=str(copy / "cache"))
    try:
        done = subprocess.run([sys.executable, "-m", "mutmut", "run", "--max-children", str(children)], cwd=copy,
                              env=environment, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        return -1, f"timed out after {timeout:.0f} s: {str(expired.stdout or '')[-2000:]}"
    return done.returncode, (done.stdout + done.stderr)[-3000:]


def mutant_lines(copy: Path, path: str, mutant: str) -> tuple[str, str]:
    """(function, the mutated lines): the mutant's function, without mutmut's mangling, and its lines that differ
    from the original function's (``mutmut show``'s diff, read here)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    here = os.getcwd()
    os.chdir(copy)
    try:
        diff = get_diff_for_mutant(mutant, path=path)
    finally:
        os.chdir(here)
    mangled = mutant.rpartition(".")[2].partition("__mutmut_")[0]
    function = mangled[2:] if mangled.startswith("x_") else ".".join(part for part in mangled[1:].split("ǁ") if part)
    added = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return function, " / ".join(added)


@dataclass
class Score:
    killed: int = 0
    survived: int = 0
    equivalent: int = 0

    @property
    def counted(self) -> int:
        return self.killed + self.survived

    def line(self, name: str) -> str:
        score = self.killed / self.counted if self.counted else 1.0
        return (f"{name:<60} killed {self.killed:4d}  survived {self.survived:4d}  equivalent {self.equivalent:3d}  "
                f"score {score:.4f}")


def score_module(name: str, module: Module, children: int, timeout: float, survivors: list[str],
                 used: set) -> dict[str, Score]:
    with tempfile.TemporaryDirectory(prefix=f"mutation-score-{name}-") as scratch:
        copy = Path(scratch)
        scratch_copy(copy, module)
        started = time.monotonic()
        status, output = run_mutmut(copy, children, timeout)
        files = mutated_files(copy, module)
        scores = {}
        for path in files:
            meta = copy / "mutants" / f"{path}.meta"
            if not meta.exists():
                raise SystemExit(f"{name}: mutmut wrote no results for {path} (exit {status}):\n{output}")
            score = scores[path] = Score()
            for mutant, code in sorted(json.loads(meta.read_text())["exit_code_by_key"].items()):
                if code in KILLED:
                    score.killed += 1
                    continue
                function, lines = mutant_lines(copy, path, mutant)
                key = (path.removeprefix(PACKAGE + "/"), function, lines)
                if key in EQUIVALENT:
                    score.equivalent += 1
                    used.add(key)
                    continue
                if code not in SURVIVED:
                    raise SystemExit(f"{name}: {mutant} was not run (mutmut exit code {code!r}):\n{output}")
                score.survived += 1
                why = "no selected test calls it" if code in (5, 33) else "survived"
                survivors.append(f"  {key[0]} {function}: {lines}   [{why}; {mutant}]")
    print(f"{name} ({time.monotonic() - started:.0f} s)", flush=True)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--module", action="append", choices=sorted(MODULES), help="a module to run (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the modules, their files and tests, run nothing")
    parser.add_argument("--quick", action="store_true", help="a smoke run: the balance module only")
    parser.add_argument("--max-children", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one module's mutmut run may take")
    args = parser.parse_args()
    if args.list:
        for name, module in MODULES.items():
            print(f"{name}: {', '.join(module.sources)}\n  " + "\n  ".join(module.tests))
        print(f"modules={len(MODULES)}")
        return
    names = ["balance"] if args.quick else args.module or list(MODULES)
    total, survivors, used = Score(), [], set()
    lines = []
    for name in names:
        scores = score_module(name, MODULES[name], args.max_children, args.timeout, survivors, used)
        module = Score(*(sum(getattr(score, field) for score in scores.values())
                         for field in ("killed", "survived", "equivalent")))
        done = [module.line(name)] + [score.line("  " + path.removeprefix(PACKAGE + "/")) for path, score in scores.items()]
        print("\n".join(done), flush=True)  # as each module ends: a run cut short keeps what it measured
        lines += done
        for field in ("killed", "survived", "equivalent"):
            setattr(total, field, getattr(total, field) + getattr(module, field))
    print("\nper module:\n" + "\n".join(lines))
    listed = [key for key in EQUIVALENT if any(key[0].startswith(tuple(
        pattern.split("*")[0] for pattern in MODULES[name].sources)) for name in names)]
    print(f"\nequivalent mutants listed: {len(EQUIVALENT)} ({len(used)} of them met in this run)")
    for key in listed:
        print(f"  {key[0]} {key[1]}: {key[2]}\n      why: {EQUIVALENT[key]}")
    print(f"\nsurviving non-equivalent mutants: {len(survivors)}")
    print("\n".join(survivors))
    print(total.line("all"))
    print(f"mutation_score={total.killed / total.counted if total.counted else 1.0:.4f}")


if __name__ == "__main__":
    main()
