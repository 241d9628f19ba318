"""Continuous batching's core (:class:`distrain.generation.decoding.RunningBatch`): rows join a running batch two at a
time every other step and leave as they finish, and every row's tokens are those it gets decoded alone —
by distrain's loop and by transformers' ``generate`` — whatever rows it shared steps with."""

from __future__ import annotations

import pytest
import torch

from distrain.generation.decoding import GenerationSettings, Request, RunningBatch, generate

SIZES = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "max_position_embeddings": 64}
END, PAD = 5, 0


def tiny(model_type: str, **extra):
    import transformers

    torch.manual_seed(0)
    sizes = ({"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64} if model_type == "gpt2" else SIZES)
    config = transformers.AutoConfig.for_model(model_type, **sizes, **extra, vocab_size=100, bos_token_id=1,
                                               eos_token_id=END, pad_token_id=PAD)
    return transformers.AutoModelForCausalLM.from_config(config).eval()


def requests(count: int, seed: int, settings: dict | None = None) -> list[Request]:
    """``count`` prompts of 2 to 20 tokens with budgets of 3 to 19 new tokens."""
    rng = torch.Generator().manual_seed(seed)
    lengths, budgets = torch.randint(1, 20, (count,), generator=rng), torch.randint(3, 20, (count,), generator=rng)
    return [Request([1] + torch.randint(6, 100, (int(n),), generator=rng).tolist(),
                    GenerationSettings(max_new_tokens=int(b), **(settings or {})), number)
            for number, (n, b) in enumerate(zip(lengths, budgets))]


def run(model, waiting: list[Request], admit_every: int = 2, per_admission: int = 2) -> RunningBatch:
    """Admit ``per_admission`` rows every ``admit_every`` steps until all have finished."""
    batch, waiting, step = RunningBatch(model, {END}, PAD, context_length=64), list(waiting), 0
    while waiting or len(batch):
        if waiting and step % admit_every == 0:
            batch.admit(waiting[:per_admission])
            waiting = waiting[per_admission:]
        batch.step()
        step += 1
    return batch


@pytest.mark.parametrize("model_type", ["llama", "gpt2"])
def test_rows_that_join_and_leave_get_the_tokens_they_get_alone(model_type):
    model = tiny(model_type)
    rows = requests(8, seed=1)
    batch = run(model, rows)
    assert len(batch) == 0 and batch.cached_tokens == 0  # everyone left, nothing cached
    for row in rows:
        alone = generate(model, [row.prompt], row.settings, {END}, PAD, 64)[0]
        theirs = model.generate(torch.tensor([row.prompt]), attention_mask=torch.ones(1, len(row.prompt), dtype=torch.long),
                                max_new_tokens=row.settings.max_new_tokens, do_sample=False, eos_token_id=END,
                                pad_token_id=PAD)[0, len(row.prompt):].tolist()
        assert row.tokens == alone.tokens == theirs[:len(row.tokens)], row.number
        assert row.finish_reason == alone.finish_reason


def test_a_sampled_row_draws_the_same_tokens_beside_any_other_rows():
    model = tiny("llama")
    sampling = {"temperature": 1.0, "top_p": 0.9, "seed": 3}
    together, apart = requests(6, seed=2, settings=sampling), requests(6, seed=2, settings=sampling)
    run(model, together, admit_every=1, per_admission=3)
    for row in apart:
        run(model, [row])
    assert [row.tokens for row in together] == [row.tokens for row in apart]
    assert len({tuple(row.tokens) for row in together}) > 1


def test_a_cancelled_row_leaves_and_the_padding_it_needed_goes_with_it():
    model = tiny("llama")
    batch = RunningBatch(model, {END}, PAD, context_length=64)
    long, short = Request([1] + list(range(10, 40)), GenerationSettings(max_new_tokens=40)), Request([1, 7])
    batch.admit([long, short])
    batch.step()
    assert batch.attention_mask.shape == (2, 32)  # the long prompt's 31 tokens and one step
    batch.cancel(long)
    assert len(batch) == 1 and batch.attention_mask.shape == (1, 3) and batch.cached_tokens == 3
    alone = generate(model, [short.prompt], short.settings, {END}, PAD, 64)[0]
    while len(batch):
        batch.step()
    assert short.tokens == alone.tokens


def test_a_model_whose_cache_cannot_be_joined_is_refused_by_name():
    batch = RunningBatch(tiny("mistral", sliding_window=4), {END}, PAD, context_length=64)
    with pytest.raises(ValueError, match="DynamicSlidingWindowLayer"):
        batch.admit([Request([1, 2, 3])])


# --------------------------------------------------------------------------------- admission
def test_admission_keeps_arrival_order_and_every_limit_but_never_starves_the_first():
    from distrain.generation.admission import Limits, admissible

    assert admissible([5, 5, 5], 0, 0, Limits(max_batch_size=2)) == 2
    assert admissible([5, 5, 5], 1, 9, Limits(max_batch_size=2)) == 1
    assert admissible([4, 4, 4], 0, 0, Limits(max_prefill_tokens=9)) == 2
    assert admissible([4, 30, 1], 0, 0, Limits(max_prefill_tokens=9)) == 1  # the short one does not jump the queue
    assert admissible([50], 0, 0, Limits(max_prefill_tokens=9)) == 1  # alone into an empty batch
    assert admissible([50], 1, 3, Limits(max_prefill_tokens=9)) == 0
    # the cache counts padding: 2 running rows 10 wide, a newcomer of 20 makes it 3 rows x 20
    assert admissible([20], 2, 10, Limits(max_cached_tokens=59)) == 0
    assert admissible([20], 2, 10, Limits(max_cached_tokens=60)) == 1
    assert admissible([5, 5], 0, 0, Limits(static=True)) == 2  # static: a batch forms when none runs
    assert admissible([5, 5], 1, 9, Limits(static=True)) == 0  # and no one joins it


def test_the_scheduler_runs_requests_within_the_batch_size_and_each_gets_its_own_tokens():
    from distrain.generation.admission import Limits, Admissions

    model = tiny("llama")
    scheduler = Admissions(RunningBatch(model, {END}, PAD, context_length=64), Limits(max_batch_size=3))
    rows = requests(7, seed=4)
    for row in rows:
        scheduler.submit(row)
    scheduler.cancel(rows[5])  # still waiting: it never runs
    finished, widest = [], 0
    while not scheduler.idle:
        finished += scheduler.step()
        widest = max(widest, len(scheduler.batch))
    assert widest == 3 and sorted(row.number for row in finished) == [0, 1, 2, 3, 4, 6]
    assert rows[5].tokens == []
    for row in finished:
        assert row.tokens == generate(model, [row.prompt], row.settings, {END}, PAD, 64)[0].tokens


def test_cancelling_one_of_two_identical_requests_leaves_the_other_to_run():
    from distrain.generation.admission import Limits, Admissions

    model = tiny("llama")
    scheduler = Admissions(RunningBatch(model, {END}, PAD, context_length=64), Limits(max_batch_size=1))
    first, second, third = (Request([1, 7, 8], GenerationSettings(max_new_tokens=4)) for _ in range(3))
    for row in (first, second, third):
        scheduler.submit(row)
    scheduler.step()  # the first runs; the others wait (one row at a time)
    scheduler.cancel(third)  # equal to the second in every field, but another client's request
    scheduler.cancel(first)  # running
    assert list(scheduler.waiting) == [second] and scheduler.waiting[0] is second and len(scheduler.batch) == 0
    while not scheduler.idle:
        scheduler.step()
    assert first.tokens and len(second.tokens) == 4 and third.tokens == []
