"""AllenNLP's Python loaders, samplers, reader ``read`` and hand-built vocabulary, by hand-worked cases."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from distrain.allennlp.data import Instance, Token, Vocabulary
from distrain.allennlp.data.data_loaders import MultiProcessDataLoader, SimpleDataLoader, WorkerError
from distrain.allennlp.data.dataset_readers import DatasetReader, WorkerInfo
from distrain.allennlp.data.fields import LabelField, MetadataField, TextField
from distrain.allennlp.data.samplers import BucketBatchSampler, MaxTokensBatchSampler
from distrain.allennlp.data.token_indexers import SingleIdTokenIndexer
from distrain.config.errors import ConfigError
from distrain.data.reader import DataError

LENGTHS = [4, 4, 3, 9, 1]


def instances() -> list[Instance]:
    indexers = {"tokens": SingleIdTokenIndexer()}
    return [Instance({"text": TextField([Token("word")] * n, indexers), "number": MetadataField(i)})
            for i, n in enumerate(LENGTHS)]


def test_bucketing_groups_similar_lengths_and_max_tokens_caps_padded_size():
    unshuffled = BucketBatchSampler(batch_size=2, sorting_keys=["text"], shuffle=False)
    assert list(unshuffled.get_batch_indices(instances())) == [[4, 2], [0, 1], [3]]
    guessing = BucketBatchSampler(batch_size=2, padding_noise=0)
    batches = list(guessing.get_batch_indices(instances()))
    assert guessing.sorting_keys == ["text"] and sorted(batches) == [[0, 1], [3], [4, 2]]
    assert BucketBatchSampler(batch_size=2, drop_last=True).get_num_batches(instances()) == 2
    capped = MaxTokensBatchSampler(max_tokens=8, sorting_keys=["text"], padding_noise=0)
    assert sorted(capped.get_batch_indices(instances())) == [[0, 1], [3], [4, 2]]
    with pytest.raises(ConfigError):
        list(BucketBatchSampler(batch_size=2, sorting_keys=["missing"]).get_batch_indices(instances()))


def test_the_simple_loader_pads_batches_and_keeps_going_across_epochs():
    vocab = Vocabulary()
    loader = SimpleDataLoader(instances(), 2, vocab=vocab, batches_per_epoch=2)
    first = [batch["number"] for batch in loader]
    second = [batch["number"] for batch in loader]
    assert first == [[0, 1], [2, 3]] and second == [[4], [0, 1]]
    batch = next(iter(SimpleDataLoader(instances()[2:4], 2, vocab=vocab)))
    assert batch["text"]["tokens"]["tokens"].shape == (2, 9)


class CountingReader(DatasetReader):
    def __init__(self, **kwargs) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)

    def _read(self, file_path: str):
        for number in self.shard_iterable(range(10)):
            yield {"number": LabelField(number, skip_indexing=True)}  # a plain dict, as AllenNLP 1.x readers made


class OpeningReader(DatasetReader):
    def _read(self, file_path: str):
        with open(file_path) as lines:
            for line in lines:
                yield Instance({"text": TextField([Token(line.strip())], {"tokens": SingleIdTokenIndexer()})})


def test_read_shards_by_worker_shares_max_instances_and_wraps_dicts():
    reader = CountingReader(max_instances=7)
    assert [instance["number"].label for instance in reader.read("not a file")] == list(range(7))
    assert all(isinstance(instance, Instance) for instance in reader.read("not a file"))
    shares = []
    for worker in range(3):
        reader._set_worker_info(WorkerInfo(3, worker))
        shares.append([instance["number"].label for instance in reader.read("not a file")])
    assert shares == [[0, 3, 6], [1, 4], [2, 5]]
    with pytest.raises(DataError):
        list(OpeningReader().read("/no/such/file.txt"))


def test_the_multiprocess_loader_reads_each_workers_share_and_refuses_indexers_there(tmp_path):
    loader = MultiProcessDataLoader(CountingReader(), "x", batch_size=4, num_workers=2)
    loader.index_with(Vocabulary())
    numbers = [int(n) for batch in loader for n in batch["number"].tolist()]
    assert Counter(numbers) == Counter(range(10)) and len(loader) == 3
    with pytest.raises(ValueError, match="index_with"):
        list(MultiProcessDataLoader(CountingReader(), "x", batch_size=4))
    data = tmp_path / "lines.txt"
    data.write_text("a\nb\n")
    with pytest.raises(WorkerError, match="apply_token_indexers"):
        list(MultiProcessDataLoader(OpeningReader(), str(data), batch_size=1, num_workers=2).iter_instances())


def test_a_hand_built_vocabulary_follows_allennlps_rules(tmp_path):
    vocab = Vocabulary(counter={"tokens": {"a": 4, "b": 2, "c": 3}, "labels": {"x": 1}}, min_count={"tokens": 3},
                       tokens_to_add={"tokens": ["z"]})
    assert vocab.get_index_to_token_vocabulary() == {0: "@@PADDING@@", 1: "@@UNKNOWN@@", 2: "a", 3: "c", 4: "z"}
    assert vocab.get_token_index("b") == 1 and vocab.get_token_to_index_vocabulary("labels") == {"x": 0}
    with pytest.raises(KeyError, match="does not contain the default OOV token"):
        vocab.get_token_index("y", "labels")
    assert Vocabulary().get_vocab_size("anything") == 2 and Vocabulary().get_vocab_size("my_tags") == 0
    vocab.save_to_files(tmp_path)
    again = Vocabulary.from_files(tmp_path)
    assert again == vocab and again._non_padded_namespaces == {"*tags", "*labels"}
    rng = random.Random(0)
    texts = [TextField([Token(rng.choice("pq"))], {"tokens": SingleIdTokenIndexer()}) for _ in range(5)]
    counted = Vocabulary.from_instances([Instance({"t": text}) for text in texts], max_vocab_size=1)
    assert counted.get_vocab_size() == 3


def test_interleaving_marks_each_instance_with_its_reader(tmp_path):
    import json

    from distrain.allennlp.data.dataset_readers import InterleavingDatasetReader

    class Lines(DatasetReader):
        def _read(self, file_path: str):
            for line in open(file_path):
                yield Instance({"line": TextField([Token(line.strip())], {"tokens": SingleIdTokenIndexer()})})

    (tmp_path / "a.txt").write_text("a1\na2\na3\n")
    (tmp_path / "b.txt").write_text("b1\n")
    paths = {"a": str(tmp_path / "a.txt"), "b": str(tmp_path / "b.txt")}
    turns = InterleavingDatasetReader({"a": Lines(), "b": Lines()})
    assert [i["line"].tokens[0].text for i in turns.read(paths)] == ["a1", "b1", "a2", "a3"]
    runs = InterleavingDatasetReader({"a": Lines(), "b": Lines()}, dataset_field_name="source", scheme="all_at_once")
    assert [i["source"].metadata for i in runs.read(json.dumps(paths))] == ["a", "a", "a", "b"]
    with pytest.raises(DataError):
        list(turns.read({"a": paths["a"]}))


def test_the_babi_reader_keeps_each_story_up_to_its_question(tmp_path):
    from distrain.allennlp.data.dataset_readers import BabiReader

    (tmp_path / "qa.txt").write_text("1 Ann is a cat.\n2 Cats fear dogs.\n3 What does Ann fear?\tdogs\t1 2\n"
                                     "1 Bob is a dog.\n2 What is Bob?\tdog\t1\n")
    flat = list(BabiReader().read(str(tmp_path / "qa.txt")))
    assert [t.text for t in flat[0]["context"].tokens] == ["Ann", "is", "a", "cat", ".", "Cats", "fear", "dogs", "."]
    assert [t.text for t in flat[1]["context"].tokens] == ["Bob", "is", "a", "dog", "."]
    kept = list(BabiReader(keep_sentences=True).read(str(tmp_path / "qa.txt")))
    assert len(kept[0]["context"]) == 2 and [i.sequence_index for i in kept[0]["supports"]] == [0, 1]
    assert [t.text for t in kept[0]["question"].tokens] == ["What", "does", "Ann", "fear", "?"]


def test_multitask_schedulers_mix_or_keep_apart_the_datasets():
    from distrain.allennlp.data.data_loaders.multitask_scheduler import (HomogeneousRoundRobinScheduler,
                                                                          RoundRobinScheduler)

    mixed = RoundRobinScheduler(batch_size=3).batch_instances({"a": ["a"] * 4, "b": ["b"] * 2})
    assert list(mixed) == [["a", "b", "a"], ["b", "a", "a"]]
    apart = HomogeneousRoundRobinScheduler({"a": 2, "b": 1}, drop_last=True)
    assert list(apart.batch_instances({"a": ["a"] * 5, "b": ["b"] * 2})) == [["a", "a"], ["b"], ["a", "a"], ["b"]]
    assert apart.count_batches({"a": 5, "b": 2}) == 4


def test_the_multitask_loader_shares_each_epoch_by_weight_and_reads_on():
    from distrain.allennlp.data.data_loaders import MultiTaskDataLoader
    from distrain.allennlp.data.data_loaders.multitask_epoch_sampler import WeightedSampler
    from distrain.allennlp.data.data_loaders.multitask_scheduler import RoundRobinScheduler
    from distrain.allennlp.data.dataset_readers import MultiTaskDatasetReader

    class Numbers(DatasetReader):
        def __init__(self, first: int) -> None:
            super().__init__()
            self.first = first

        def _read(self, file_path: str):
            for number in range(self.first, self.first + 3):
                yield Instance({"n": LabelField(number, skip_indexing=True)})

    reader = MultiTaskDatasetReader({"a": Numbers(0), "b": Numbers(10)})
    loader = MultiTaskDataLoader(reader, {"a": "x", "b": "x"}, RoundRobinScheduler(batch_size=3),
                                 sampler=WeightedSampler({"a": 1, "b": 2}), instances_per_epoch=6)
    loader.index_with(Vocabulary())
    first = [batch["n"].tolist() for batch in loader]
    second = [batch["n"].tolist() for batch in loader]
    assert first == [[0, 10, 1], [11, 12, 10]] and second == [[2, 11, 0], [12, 10, 11]]
