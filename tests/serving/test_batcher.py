"""The batching policy and the bounded queue of ``distrain serve``, without HTTP or a model."""

from __future__ import annotations

import asyncio
import threading

import pytest

from distrain.serving.batcher import (
    Batcher, Draining, Pending, QueueFull, RequestTimedOut, padded_tokens, select_batch,
)


def waiting(*lengths: int) -> list[Pending]:
    return [Pending(item=i, length=n, arrived=float(i), future=None) for i, n in enumerate(lengths)]


def items(batch: list[Pending]) -> list[int]:
    return sorted(p.item for p in batch)


# ------------------------------------------------------------------------------- the policy
def test_the_oldest_request_is_always_in_the_batch_with_its_closest_lengths():
    queue = waiting(50, 3, 48, 200, 52, 4)
    batch = select_batch(queue, max_batch_size=3)
    assert batch[0].item == 0
    assert items(batch) == [0, 2, 4]  # 48 and 52 are nearest to 50; 3, 4 and 200 wait


def test_equal_distances_prefer_the_older_request():
    assert items(select_batch(waiting(10, 12, 8, 12), max_batch_size=2)) == [0, 1]


def test_the_batch_size_cap_holds():
    assert len(select_batch(waiting(*[5] * 40), max_batch_size=32)) == 32
    assert len(select_batch(waiting(5, 5, 5), max_batch_size=32)) == 3


def test_the_token_cap_counts_padding_and_skips_what_does_not_fit():
    queue = waiting(10, 30, 11, 9, 12)
    batch = select_batch(queue, max_batch_size=32, max_batch_tokens=40)
    assert padded_tokens([p.length for p in batch]) <= 40
    assert items(batch) == [0, 2, 3]  # 3 x 11 = 33; adding 12 would make 4 x 12 = 48; 30 never fits


def test_the_padding_cap_keeps_lengths_that_would_pad_the_batch_for_the_next_one():
    queue = waiting(100, 190, 96, 40, 104, 120)
    batch = select_batch(queue, max_batch_size=32, max_padding=0.25)
    lengths = [p.length for p in batch]
    assert items(batch) == [0, 2, 4, 5]  # 190 and 40 would pad the batch past 1.25 x its tokens
    assert padded_tokens(lengths) <= 1.25 * sum(lengths)
    assert len(select_batch(queue, max_batch_size=32)) == 6  # no cap: everything goes


def test_the_oldest_runs_alone_even_over_the_token_cap():
    assert items(select_batch(waiting(500, 1, 2), max_batch_size=8, max_batch_tokens=100)) == [0]


def test_an_empty_queue_gives_no_batch():
    assert select_batch([], max_batch_size=4) == []


# ---------------------------------------------------------------------------- the batcher
class Recorder:
    """A ``run_batch`` that records its batches; can block until released, and fails on "bad" items."""

    def __init__(self, block: bool = False) -> None:
        self.batches: list[list] = []
        self.release = threading.Event()
        self.entered = threading.Event()
        if not block:
            self.release.set()

    def __call__(self, batch: list) -> list:
        self.batches.append(list(batch))
        self.entered.set()
        assert self.release.wait(30)
        if any(item == "bad" for item in batch):
            raise ValueError("bad item")
        return [f"done {item}" for item in batch]

    @property
    def computed(self) -> list:
        return [item for batch in self.batches for item in batch]


async def until(condition, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.005)


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_a_lone_request_is_answered_without_waiting_for_company(monkeypatch):
    """With ``max_wait_s`` 0 a lone request is its own batch at once: the batcher never starts a timed wait for
    company (every ``asyncio.wait_for`` it makes is recorded; the request's own has no deadline here), and its
    report says it waited 0 s on the batcher's clock (frozen). Judged by what ran, not by how long it took."""
    reports, timed_waits = [], []
    real_wait_for = asyncio.wait_for

    def recording_wait_for(awaitable, timeout):
        if timeout is not None:
            timed_waits.append(timeout)
        return real_wait_for(awaitable, timeout)

    monkeypatch.setattr("distrain.serving.batcher.asyncio.wait_for", recording_wait_for)

    async def main():
        recorder = Recorder()
        batcher = Batcher(recorder, max_batch_size=32, max_wait_s=0.0, timeout_s=None, clock=lambda: 100.0,
                          on_batch=reports.append)
        batcher.start()
        assert await batcher.submit("a") == "done a"
        await batcher.close()
        return recorder

    recorder = asyncio.run(main())
    assert recorder.batches == [["a"]]
    assert timed_waits == []
    assert [report.queue_waits for report in reports] == [[0.0]]


def test_requests_queued_while_a_batch_runs_form_the_next_batch():
    async def main():
        recorder = Recorder(block=True)
        batcher = Batcher(recorder, max_batch_size=4)
        batcher.start()
        first = asyncio.ensure_future(batcher.submit("first"))
        await until(recorder.entered.is_set)
        rest = [asyncio.ensure_future(batcher.submit(f"r{i}")) for i in range(6)]
        await until(lambda: batcher.depth == 6)
        recorder.release.set()
        answers = await asyncio.gather(first, *rest)
        await batcher.close()
        return recorder, answers

    recorder, answers = run(main())
    assert answers == ["done first"] + [f"done r{i}" for i in range(6)]
    assert [len(batch) for batch in recorder.batches] == [1, 4, 2]


def test_max_wait_lets_a_batch_fill():
    async def main():
        recorder = Recorder()
        batcher = Batcher(recorder, max_batch_size=3, max_wait_s=5.0)
        batcher.start()
        tasks = [asyncio.ensure_future(batcher.submit(i)) for i in range(3)]
        await asyncio.gather(*tasks)  # a full batch does not wait the 5 s
        await batcher.close()
        return recorder

    assert run(main()).batches == [[0, 1, 2]]


def test_a_full_queue_refuses_at_once():
    async def main():
        recorder = Recorder(block=True)
        batcher = Batcher(recorder, max_batch_size=1, max_queue=2)
        batcher.start()
        running = asyncio.ensure_future(batcher.submit("running"))
        await until(recorder.entered.is_set)
        queued = [asyncio.ensure_future(batcher.submit(f"q{i}")) for i in range(2)]
        await until(lambda: batcher.depth == 2)
        with pytest.raises(QueueFull):
            await batcher.submit("one too many")
        recorder.release.set()
        await asyncio.gather(running, *queued)
        await batcher.close()
        return recorder

    assert "one too many" not in run(main()).computed


def test_a_request_waiting_past_its_deadline_times_out_and_is_never_computed():
    async def main():
        recorder = Recorder(block=True)
        batcher = Batcher(recorder, max_batch_size=1, timeout_s=0.2)
        batcher.start()
        running = asyncio.ensure_future(batcher.submit("running"))
        await until(recorder.entered.is_set)
        with pytest.raises(RequestTimedOut):
            await batcher.submit("late")  # the model is busy for longer than its 0.2 s
        assert batcher.depth == 0
        recorder.release.set()
        assert await running == "done running"  # started in time: answered, not timed out
        await batcher.close()
        return recorder

    assert run(main()).computed == ["running"]


def test_a_failing_batch_is_rerun_one_by_one_so_only_the_culprit_fails():
    async def main():
        recorder = Recorder(block=True)
        reports = []
        batcher = Batcher(recorder, max_batch_size=8, on_batch=reports.append)
        batcher.start()
        first = asyncio.ensure_future(batcher.submit("first"))
        await until(recorder.entered.is_set)
        others = [asyncio.ensure_future(batcher.submit(item)) for item in ("a", "bad", "b")]
        await until(lambda: batcher.depth == 3)
        recorder.release.set()
        answers = await asyncio.gather(first, *others, return_exceptions=True)
        await batcher.close()
        return recorder, answers, reports

    recorder, answers, reports = run(main())
    assert answers[:2] == ["done first", "done a"] and answers[3] == "done b"
    assert isinstance(answers[2], ValueError)
    assert recorder.batches[1:] == [["a", "bad", "b"], ["a"], ["bad"], ["b"]]
    assert [report.failed_together for report in reports] == [False, True]


def test_close_answers_everything_queued_then_refuses_new_requests():
    async def main():
        recorder = Recorder(block=True)
        batcher = Batcher(recorder, max_batch_size=2)
        batcher.start()
        tasks = [asyncio.ensure_future(batcher.submit(i)) for i in range(5)]
        await until(lambda: recorder.entered.is_set() and batcher.depth == 3)  # [0, 1] run, 3 wait
        closing = asyncio.ensure_future(batcher.close())
        await asyncio.sleep(0)
        with pytest.raises(Draining):
            await batcher.submit("after close")
        recorder.release.set()
        await closing
        return await asyncio.gather(*tasks), batcher

    answers, batcher = run(main())
    assert answers == [f"done {i}" for i in range(5)]
    assert batcher.idle


def test_a_cancelled_request_leaves_the_queue_uncomputed():
    async def main():
        recorder = Recorder(block=True)
        batcher = Batcher(recorder, max_batch_size=4)
        batcher.start()
        running = asyncio.ensure_future(batcher.submit("running"))
        await until(recorder.entered.is_set)
        gone = asyncio.ensure_future(batcher.submit("gone"))
        await until(lambda: batcher.depth == 1)
        gone.cancel()
        await until(lambda: batcher.depth == 0)
        recorder.release.set()
        await running
        await batcher.close()
        return recorder

    assert run(main()).computed == ["running"]
