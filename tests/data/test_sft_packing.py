"""``prompt_completion_json`` with ``packing``: whole examples fill blocks of ``sequence_length`` greedily, in file
order; fewer sequences carry exactly the targets the unpacked ones do; the blocks are the same whether one
reader or several read the file; ``position_ids`` restart per example, so a Llama scores each packed example
as it scores it alone (transformers' packed-sequence mask); and a config with packing trains."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import write_jsonl
from support.transformer_fixtures import WORDS, write_tiny_bert

IGNORE = -100
LLAMA = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}


def sft_records(count: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [{"prompt": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))),
             "completion": " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))} for _ in range(count)]


@pytest.fixture(scope="module")
def sft(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("sft_packing")
    return {"tokenizer": str(write_tiny_bert(root / "tokenizer")),
            "train": write_jsonl(root / "train.jsonl", sft_records(40, seed=1)),
            "validation": write_jsonl(root / "validation.jsonl", sft_records(12, seed=2)), "root": root}


def reader(sft: dict, packing: bool, sequence_length: int = 16):
    from distrain.data.readers.prompt_completion_json import PromptCompletionJsonReader

    return PromptCompletionJsonReader(sft["tokenizer"], sequence_length=sequence_length, packing=packing)


def ids(instance: dict, key: str) -> list[int]:
    return [int(value) for value in instance[key].ids]


def test_blocks_hold_whole_examples_greedily_with_positions_restarting():
    from distrain.data.readers.prompt_completion_json import pack_examples

    examples = [([1, 2, 3], [IGNORE, IGNORE, 3]), ([4, 5], [IGNORE, 5]), ([6, 7, 8, 9], [6, 7, 8, 9]), ([10], [10]),
                ([11, 12, 13, 14, 15], [IGNORE, 12, 13, 14, 15])]
    blocks = list(pack_examples(examples, 5))
    assert [block["input_ids"] for block in blocks] == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15]]
    assert [block["position_ids"] for block in blocks] == [[0, 1, 2, 0, 1], [0, 1, 2, 3, 0], [0, 1, 2, 3, 4]]
    # each example's first label is never a target, packed or not: the one before it would learn it
    assert [block["labels"] for block in blocks] == [[IGNORE, IGNORE, 3, IGNORE, 5], [IGNORE, 7, 8, 9, IGNORE],
                                                     [IGNORE, 12, 13, 14, 15]]
    assert [block["input_ids"] for block in pack_examples(examples[:3], 6)] == [[1, 2, 3, 4, 5], [6, 7, 8, 9]]


def targets(labels: list[int]) -> list[int]:
    """The labels the model learns: each position's next one (the model shifts them itself)."""
    return [label for label in labels[1:] if label != IGNORE]


def test_packing_gives_fewer_sequences_with_the_same_targets_on_any_number_of_readers(sft):
    from distrain.data.reader import ReaderShard

    unpacked = list(reader(sft, packing=False).read(sft["train"]))
    packed = list(reader(sft, packing=True).read(sft["train"]))
    assert len(packed) < 0.6 * len(unpacked)  # 23 blocks of 16 for 40 examples of 2 to 11 tokens
    assert all(len(ids(block, "input_ids")) <= 16 for block in packed)
    assert sum(len(ids(block, "input_ids")) for block in packed) == sum(len(ids(one, "input_ids")) for one in unpacked)
    assert Counter(t for one in unpacked for t in targets(ids(one, "labels"))) == \
        Counter(t for block in packed for t in targets(ids(block, "labels")))
    whole = [ids(block, "input_ids") for block in packed]
    for readers in (2, 3):
        shares = []
        for index in range(readers):
            shared = reader(sft, packing=True)
            shared.set_shard(ReaderShard(rank=index, world_size=readers))
            shares.append([ids(block, "input_ids") for block in shared.read(sft["train"])])
        assert [shares[i % readers][i // readers] for i in range(len(whole))] == whole, readers
        assert sum(map(len, shares)) == len(whole)


def test_a_llama_scores_packed_examples_as_it_scores_them_alone(sft):
    """The position ids restart per example and transformers masks each example off from the others in its
    block: the loss over a packed batch is the unpacked batch's, token for token; without them it is not."""
    import torch

    from distrain.data.dataset import IndexedDataset
    from distrain.data.vocabulary import Vocabulary
    from distrain.models.causal_language_model import CausalLanguageModel

    torch.manual_seed(0)
    model = CausalLanguageModel(Vocabulary(), tokenizer_name=sft["tokenizer"], config=LLAMA).eval()

    def batch(packing: bool) -> dict:
        instances = list(reader(sft, packing).read(sft["validation"]))
        return IndexedDataset.from_instances(instances, Vocabulary()).batch(np.arange(len(instances)))

    packed, unpacked = batch(True), batch(False)
    assert packed["input_ids"].shape[0] < unpacked["input_ids"].shape[0]
    with torch.no_grad():
        alone, together = model(**unpacked), model(**packed)
        leaking = model(**{key: value for key, value in packed.items() if key != "position_ids"})
    assert together["loss_weight"] == alone["loss_weight"]
    assert abs(float(together["loss"]) - float(alone["loss"])) < 1e-5
    assert abs(float(leaking["loss"]) - float(alone["loss"])) > 1e-3


def test_a_config_with_packing_trains(sft):
    root = sft["root"]
    config = {
        "dataset_reader": {"type": "prompt_completion_json", "tokenizer_name": sft["tokenizer"],
                           "sequence_length": 32, "packing": True},
        "train_data_path": str(sft["train"]),
        "validation_data_path": str(sft["validation"]),
        "model": {"type": "causal_language_model", "tokenizer_name": sft["tokenizer"], "config": LLAMA},
        "data_loader": {"batch_size": 4, "shuffle": True},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adamw", "lr": 0.01}, "progress_bar": False},
    }
    result = run_cli("train", str(write_config(root / "packed.json", config)), "-s", str(root / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((root / "run" / "metrics.json").read_text())
    assert math.isfinite(metrics["validation_loss"]) and metrics["training_loss"] < math.log(48)
