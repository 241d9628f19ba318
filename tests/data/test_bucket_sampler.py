"""AllenNLP's ``bucket`` batch sampler keeps distrain's promise: one global order per epoch, so the same
global batches (and updates) on any number of workers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from distrain.data.batch_samplers.bucket import BucketBatchSampler
from distrain.data.dataset import IndexedDataset, RaggedColumn
from distrain.data.loader import DataLoader, DataLoaderConfig
from distrain.distributed.world import World
from support.distributed import final_metrics, max_weight_difference

LENGTHS = np.random.default_rng(7).integers(1, 40, size=50)


def dataset() -> IndexedDataset:
    offsets = np.concatenate([[0], np.cumsum(LENGTHS)])
    return IndexedDataset({"tokens": RaggedColumn(np.ones(offsets[-1], dtype=np.int64), offsets),
                           "label": RaggedColumn(np.ones(50, dtype=np.int64), np.arange(51))})


def worker_batches(world_size: int, seed: int = 3, epoch: int = 0, noise: float = 0.1) -> list[list[np.ndarray]]:
    """Each worker's slices of the epoch's global batches (12 samples a global batch)."""
    sampler = BucketBatchSampler(batch_size=12 // world_size, sorting_keys=["tokens"], padding_noise=noise)
    slices = []
    for rank in range(world_size):
        loader = DataLoader(dataset(), DataLoaderConfig(batch_sampler=sampler), World(rank=rank, size=world_size), seed)
        loader.set_epoch(epoch)
        slices.append([loader.my_slice(batch) for batch in loader.sampler.batches(epoch)])
    return slices


@pytest.mark.parametrize("world_size", [2, 3])
def test_workers_slices_of_each_global_batch_are_the_one_worker_batches(world_size):
    (alone,) = worker_batches(1)
    together = worker_batches(world_size)
    assert all(len(slices) == len(alone) for slices in together)  # every worker takes the same steps
    for step, batch in enumerate(alone):
        assert np.array_equal(np.concatenate([slices[step] for slices in together]), batch)


def test_batches_hold_similar_lengths_and_cover_the_split_once():
    (batches,) = worker_batches(1, noise=0.0)
    assert sorted(np.concatenate(batches).tolist()) == list(range(50))
    # without noise the batches are consecutive runs of the length-sorted order
    ranges = sorted((LENGTHS[batch].min(), LENGTHS[batch].max()) for batch in batches)
    assert all(high <= next_low for (_, high), (next_low, _) in zip(ranges, ranges[1:]))
    assert [len(batch) for batch in batches].count(12) == 4


def test_padding_noise_is_seeded_by_seed_and_epoch():
    def flat(**kwargs):
        return np.concatenate(worker_batches(1, **kwargs)[0]).tolist()

    assert flat(seed=3, epoch=1) == flat(seed=3, epoch=1)
    assert flat(seed=3, epoch=1) != flat(seed=3, epoch=2)
    assert flat(seed=3, epoch=1) != flat(seed=4, epoch=1)
    in_batch_orders = {tuple(flat(seed=seed, epoch=0, noise=0.5)) for seed in range(4)}
    assert len(in_batch_orders) == 4


def test_a_fields_sub_columns_give_its_length():
    # a text field with token indexers is stored as sub-columns field::indexer::key (issue 29, part A)
    offsets = np.concatenate([[0], np.cumsum(LENGTHS)])
    data = IndexedDataset({"text::tokens::tokens": RaggedColumn(np.ones(offsets[-1], dtype=np.int64), offsets),
                           "label": RaggedColumn(np.ones(50, dtype=np.int64), np.arange(51))})
    assert np.array_equal(data.field_lengths("text"), LENGTHS)
    with pytest.raises(KeyError):
        data.field_lengths("tex")


def test_unknown_sorting_key_names_the_fields():
    sampler = BucketBatchSampler(batch_size=4, sorting_keys=["text"])
    loader = DataLoader(dataset(), DataLoaderConfig(batch_sampler=sampler))
    with pytest.raises(Exception) as error:
        loader.sampler.batches(0)
    assert "data_loader.batch_sampler.sorting_keys" in str(error.value) and "tokens, label" in str(error.value)


def test_two_cpu_workers_with_bucket_batches_end_within_1e_5_of_one_worker(tmp_path, text_data):
    config = text_config(text_data, num_epochs=2, optimizer="adagrad", grad_clipping=0.05,
                         learning_rate_scheduler={"type": "slanted_triangular", "cut_frac": 0.2})
    config["model"]["initializer"] = {"regexes": [["weight", {"type": "xavier_normal"}], ["bias", "zero"]]}
    config["model"]["regularizer"] = {"regexes": [["weight", {"type": "l2", "alpha": 0.01}]]}
    runs = {}
    for name, per_worker, distributed in (("one", 16, None), ("two", 8, {"cuda_devices": [-1, -1]})):
        config["data_loader"] = {"batch_sampler": {"type": "bucket", "batch_size": per_worker,
                                                   "sorting_keys": ["tokens"], "padding_noise": 0.2}}
        if distributed:
            config["distributed"] = distributed
        result = run_cli("train", str(write_config(tmp_path / f"{name}.json", config)), "-s", str(tmp_path / name),
                         timeout=180)
        assert result.returncode == 0, result.stderr[-3000:]
        runs[name] = tmp_path / name
    assert max_weight_difference(runs["one"], runs["two"]) <= 1e-5
    one, two = final_metrics(runs["one"]), final_metrics(runs["two"])
    for key in ("training_loss", "validation_loss", "validation_accuracy"):
        assert two[key] == pytest.approx(one[key], abs=1e-6), key
    assert json.loads((runs["two"] / "config.json").read_text())["data_loader"]["batch_sampler"]["type"] == "bucket"
