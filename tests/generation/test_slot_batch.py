"""The decode step without padding (:mod:`distrain.generation.slots`, :class:`~distrain.generation.slot_batch.SlotBatch`):
the step plan, the in-place slot writes and the attention over each row's own length, checked as pure functions;
then rows that join, leave and read long prompts in chunks beside decoding rows get, greedy in fp32, the tokens
they get one at a time (by the padded batch and by transformers' ``generate``), with the linears on packed
weights (:mod:`distrain.generation.packed_linears`) and without."""

from __future__ import annotations

import pytest
import torch

from distrain.generation import decode_attention, packed_linears, ragged_attention
from distrain.generation.decoding import GenerationSettings, Request, RunningBatch, generate
from distrain.generation.slot_batch import SlotBatch
from distrain.generation.slots import SlotCache, plan_step, slot_attention
from generation.test_running_batch import END, PAD, requests, tiny


# ------------------------------------------------------------------------------ pure pieces
def test_a_plan_places_decode_tokens_and_prefill_chunks_at_their_slots_and_positions():
    plan = plan_step([(2, 7, 1), (0, 0, 3), (1, 4, 1)])  # slot 2 decodes at 7, slot 0 reads 3, slot 1 decodes at 4
    assert plan.slot.tolist() == [2, 0, 0, 0, 1] and plan.position.tolist() == [7, 0, 1, 2, 4]
    assert plan.decode_tokens.tolist() == [0, 4] and plan.decode_slots.tolist() == [2, 1]
    assert plan.decode_lengths.tolist() == [8, 5] and plan.longest == 8 and plan.used_slots == 3
    assert plan.chunks == [(1, 3, 0, 0)]


def test_the_cache_writes_in_place_and_grows_without_losing_what_it_holds():
    cache = SlotCache(slots=2, capacity=4)
    keys = torch.arange(2 * 3 * 5, dtype=torch.float).reshape(1, 2, 3, 5)  # 1 x heads x tokens x dim
    plan = plan_step([(1, 2, 1), (0, 0, 2)])
    cache.plan = plan
    stored, _ = cache.update(keys, -keys, 0)
    buffer = stored.data_ptr()
    assert torch.equal(stored[1, :, 2], keys[0, :, 0]) and torch.equal(stored[0, :, :2], keys[0, :, 1:])
    assert stored[1, :, :2].abs().sum() == 0  # nothing else written
    cache.plan = plan_step([(1, 3, 1)])
    again, _ = cache.update(keys[:, :, :1] + 100, keys[:, :, :1], 0)
    assert again.data_ptr() == buffer and torch.equal(again[1, :, 3], keys[0, :, 0] + 100)  # in place
    cache.reserve(5, 9)  # more rows and a longer row: one copy into tensors twice as large (or more)
    assert cache.keys[0].shape == (8, 2, 16, 5) and torch.equal(cache.keys[0][:2, :, :4], again)


@pytest.mark.parametrize("kernel", ["eager", "inductor", "ragged"])
@pytest.mark.parametrize("feeds", [[(2, 9, 1), (0, 3, 4), (1, 1, 1)],  # decode at 9, a chunk at 3-6, decode at 1
                                   [(5, 2, 1), (0, 6, 1)]])  # two rows in 6 slots: gathered
def test_attention_reads_each_row_over_its_own_length_as_if_it_were_alone(feeds, kernel):
    """``kernel``: the decoding rows through torch's SDPA, or one of :mod:`distrain.generation.decode_attention`'s
    compiled kernels (the Inductor loop, the C++ loop over each row's own length)."""
    torch.manual_seed(0)
    heads, kv_heads, dim, slots, capacity = 4, 2, 8, 6, 12
    keys, values = torch.randn(slots, kv_heads, capacity, dim), torch.randn(slots, kv_heads, capacity, dim)
    plan = plan_step(feeds)
    plan.decode_kernel = {"eager": None, "inductor": decode_attention.inductor_kernel,
                          "ragged": decode_attention.ragged_kernel}[kernel]
    if kernel == "ragged":
        assert ragged_attention.kernel() is not None, "the C++ kernel must build on the machines the suite runs on"
    query = torch.randn(1, heads, plan.tokens, dim)
    with torch.inference_mode():  # as a batch steps (torch compiles for one grad mode)
        out, _ = slot_attention(torch.nn.Module(), query, keys, values, None, scaling=dim ** -0.5, slot_plan=plan)
    assert out.shape == (1, plan.tokens, heads, dim)
    expand = lambda t: t.repeat_interleave(heads // kv_heads, 0)  # noqa: E731
    for token, (slot, position) in enumerate(zip(plan.slot.tolist(), plan.position.tolist())):
        k, v = expand(keys[slot, :, :position + 1]), expand(values[slot, :, :position + 1])
        weights = torch.softmax(query[0, :, token:token + 1] @ k.transpose(1, 2) * dim ** -0.5, -1)
        torch.testing.assert_close(out[0, token], (weights @ v)[:, 0], rtol=1e-5, atol=1e-5)


def test_a_finished_row_frees_its_slot_at_once_and_the_next_row_takes_it_without_a_copy():
    model = tiny("llama")
    batch = SlotBatch(model, {END}, PAD, context_length=64)
    first, second, third = (Request([1, 7 + k, 8], GenerationSettings(max_new_tokens=9)) for k in range(3))
    batch.admit([first, second, third])
    assert batch.cached_tokens == 0  # the prompts are read with the next step
    batch.step()  # reads the prompts
    assert batch.cached_tokens == 3 * 3 and not first.tokens
    batch.step()  # each row's first token, fed
    buffer = batch.cache.keys[0].data_ptr()
    batch.cancel(second)
    assert batch._slot == {id(first): 0, id(third): 2} and batch.cached_tokens == 2 * 4
    late = Request([1, 40, 41, 42, 43], GenerationSettings(max_new_tokens=3))
    batch.admit([late])
    assert batch._slot[id(late)] == 1 and batch.cache.keys[0].data_ptr() == buffer


def test_newcomers_are_read_in_the_decoding_rows_pass_and_a_prompt_the_model_fails_on_leaves_alone():
    """A newcomer's prompt is read in the same forward pass as the decoding rows' tokens (no pass of its own);
    where that pass raises, the running rows and the other newcomer go on as if nothing happened, and the
    failing prompt leaves the batch with its error (``take_refused``)."""
    poison, calls = 999, []

    class Flaky(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner, self.config = inner, inner.config

        def forward(self, input_ids, **inputs):
            calls.append(input_ids.shape[1])
            if input_ids.eq(poison).any():
                raise ValueError("this prompt breaks the model")
            return self.inner(input_ids=input_ids, **inputs)

    model = tiny("llama")
    batch = SlotBatch(Flaky(model), {END}, PAD, context_length=64)
    running = Request([1, 7, 8], GenerationSettings(max_new_tokens=12))
    batch.admit([running])
    batch.step()
    batch.step()
    calls.clear()
    poisoned, mate = Request([1, 40, poison], GenerationSettings(max_new_tokens=6)), Request([1, 30, 31],
                                                                                          GenerationSettings(max_new_tokens=6))
    batch.admit([mate])
    batch.step()
    assert calls == [1 + 3]  # the running row's token and the newcomer's prompt, one pass
    batch.admit([poisoned])
    batch.step()  # fails with the poisoned prompt in it; again without; then each newcomer's prompt alone
    assert calls[1:] == [1 + 1 + 3, 1 + 1, 3]
    [(refused, error)] = batch.take_refused()
    assert refused is poisoned and "breaks the model" in str(error) and poisoned not in batch.rows
    assert batch.take_refused() == []
    while len(batch):
        batch.step()
    for row in (running, mate):
        assert row.tokens == generate(model, [row.prompt], row.settings, {END}, PAD, 64)[0].tokens


def test_a_pass_that_fails_without_a_newcomer_in_it_raises():
    class Broken(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner, self.config, self.broken = inner, inner.config, False

        def forward(self, **inputs):
            if self.broken:
                raise RuntimeError("the accelerator fell over")
            return self.inner(**inputs)

    model = Broken(tiny("llama"))
    batch = SlotBatch(model, {END}, PAD, context_length=64)
    batch.admit([Request([1, 7, 8], GenerationSettings(max_new_tokens=12))])
    batch.step()
    model.broken = True
    batch.admit([Request([1, 9], GenerationSettings(max_new_tokens=3))])  # a newcomer in the failing pass too
    with pytest.raises(RuntimeError, match="fell over"):
        batch.step()


def test_a_model_the_slots_cannot_serve_is_refused_by_its_reason():
    with pytest.raises(ValueError, match="sliding window of 4"):
        SlotBatch(tiny("mistral", sliding_window=4), {END}, PAD, context_length=64)


# ------------------------------------------------------------------------ equal to alone
def run(batch, waiting: list[Request], seed: int) -> None:
    """Admit 0 to 3 waiting rows at random steps until all have finished."""
    rng, waiting = torch.Generator().manual_seed(seed), list(waiting)
    while waiting or len(batch):
        count = int(torch.randint(0, 4, (1,), generator=rng))
        batch.admit(waiting[:count])
        waiting = waiting[count:]
        if len(batch):
            batch.step()


@pytest.mark.parametrize("model_type,packed,kernel", [("llama", False, None), ("gpt2", False, None),
                                                     ("llama", True, None), ("llama", True, "ragged"),
                                                     ("llama", True, "inductor")])
def test_rows_joining_leaving_and_reading_in_chunks_get_their_one_at_a_time_tokens(model_type, packed, kernel,
                                                                                  monkeypatch):
    """``packed``: every linear of the tiny Llama on oneDNN's packed weights (the size floor lifted);
    ``kernel``: the decoding rows attend through a compiled kernel (the C++ loop, CPU's choice, or the Inductor
    loop, the choice where that cannot be built), built once before the first row and never again (Inductor's:
    for one row and for many), whatever rows and lengths the batch goes through."""
    if packed:
        monkeypatch.setattr(packed_linears, "SMALLEST", 0)
    if kernel == "inductor":  # as on a machine where the C++ loop cannot be built
        monkeypatch.setattr(ragged_attention, "kernel", lambda: None)
    model = tiny(model_type)
    rows = requests(10, seed=11)
    batch = SlotBatch(model, {END}, PAD, context_length=64, max_prefill_tokens=6,  # long prompts read over steps
                      compiled_attention=kernel is not None)
    assert (len(batch.linears) > 0) == packed
    assert batch.decode_kernel is {None: None, "ragged": decode_attention.ragged_kernel,
                                   "inductor": decode_attention.inductor_kernel}[kernel]
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    run(batch, rows, seed=3)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] == graphs  # no compile while serving
    assert len(batch) == 0 and batch.cached_tokens == 0 and batch.cache.slots <= 16
    for row in rows:
        padded = RunningBatch(model, {END}, PAD, 64)
        padded.admit([alone := Request(row.prompt, row.settings, row.number)])
        while len(padded):
            padded.step()
        theirs = model.generate(torch.tensor([row.prompt]), attention_mask=torch.ones(1, len(row.prompt), dtype=torch.long),
                                max_new_tokens=row.settings.max_new_tokens, do_sample=False, eos_token_id=END,
                                pad_token_id=PAD)[0, len(row.prompt):].tolist()
        assert row.tokens == alone.tokens == theirs[:len(row.tokens)], row.number
        assert row.finish_reason == alone.finish_reason


def test_a_sampled_row_draws_the_same_tokens_in_a_slot_batch_as_alone():
    model = tiny("llama")
    sampling = {"temperature": 1.0, "top_p": 0.9, "seed": 3}
    together, apart = requests(6, seed=2, settings=sampling), requests(6, seed=2, settings=sampling)
    run(SlotBatch(model, {END}, PAD, 64), together, seed=1)
    for row in apart:
        run(SlotBatch(model, {END}, PAD, 64), [row], seed=0)
    assert [row.tokens for row in together] == [row.tokens for row in apart]
    assert generate(model, [apart[0].prompt], apart[0].settings, {END}, PAD, 64)[0].tokens == apart[0].tokens


def test_packed_linears_compute_torchs_linear_only_inside_their_block_and_repack_a_changed_weight():
    big, small = torch.nn.Linear(1024, 512), torch.nn.Linear(64, 64)  # small: under the size floor, left alone
    model = torch.nn.Sequential(big, torch.nn.ReLU(), torch.nn.Linear(512, 1024), small)
    inputs = torch.randn(3, 5, 1024)
    packed = packed_linears.PackedLinears(model)
    assert [module for module, _ in packed.layers] == [big, model[2]]
    with torch.inference_mode():
        plain = model[:3](inputs)
        with packed.applied():
            assert "forward" in vars(big) and "forward" not in vars(small)
            torch.testing.assert_close(model[:3](inputs), plain, rtol=1e-5, atol=1e-5)
        assert "forward" not in vars(big)
        big.weight.mul_(2)  # a changed weight is packed again by the next batch
        changed = model[:3](inputs)
        with packed_linears.PackedLinears(model).applied():
            torch.testing.assert_close(model[:3](inputs), changed, rtol=1e-5, atol=1e-5)
    half = packed_linears.PackedLinears(torch.nn.Linear(1024, 1024).to(torch.bfloat16))
    assert len(half) == packed_linears.cpu_packs(torch.bfloat16)  # oneDNN's bfloat16 needs AVX-512 or AVX-NE-CONVERT


@pytest.mark.parametrize("kind", ["padded", "slots"])
def test_the_chosen_tokens_are_handed_over_before_the_pass_that_feeds_them_back(kind):
    """``step(on_taken)``: the server sends each token to its stream as soon as it is chosen, a pass earlier
    than after the step (what the time to first token and each token's latency gain)."""
    from distrain.generation.decoding import batch_class

    passes = []

    class Counting(torch.nn.Module):
        def __init__(self, inner) -> None:
            super().__init__()
            self.inner, self.config = inner, inner.config

        def forward(self, **inputs):
            passes.append(1)
            return self.inner(**inputs)

    model = tiny("llama")
    batch = batch_class(kind)(Counting(model), {END}, PAD, 64)
    row = Request([1, 7, 8], GenerationSettings(max_new_tokens=5))
    batch.admit([row])
    handed = []
    while len(batch):
        before = len(passes)
        batch.step(lambda finished: handed.append((len(passes) - before, list(row.tokens), list(finished))))
        assert len(passes) == before + (1 if len(batch) else 0)
    taken = [entry for entry in handed if entry[1]]
    assert all(passes_so_far == 0 for passes_so_far, _, _ in handed)  # each before its step's pass
    assert [tokens for _, tokens, _ in taken] == [row.tokens[:k] for k in range(1, len(row.tokens) + 1)]
    assert taken[-1][2] == [row] and row.tokens == generate(model, [row.prompt], row.settings, {END}, PAD, 64)[0].tokens
