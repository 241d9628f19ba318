"""The decode step's attention kernels, as pure functions: which of torch's SDPA kernels a step may use on a GPU
(torch's backend flags, no GPU needed), and the C++ loop over each row's own length against the same algebra
computed eagerly."""

import pytest
import torch

from distrain.generation import ragged_attention
from distrain.generation.decode_attention import attend, decode_sdpa_kernels


def test_a_decode_step_on_a_gpu_leaves_out_cudnn_attention_and_restores_the_flags_after():
    before = torch.backends.cuda.cudnn_sdp_enabled()
    torch.backends.cuda.enable_cudnn_sdp(True)
    try:
        with decode_sdpa_kernels(torch.device("cuda", 0)):
            assert not torch.backends.cuda.cudnn_sdp_enabled()
            assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()
            assert torch.backends.cuda.math_sdp_enabled()
        assert torch.backends.cuda.cudnn_sdp_enabled()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)


def test_on_a_cpu_the_flags_stay_as_they_are():
    before = torch.backends.cuda.cudnn_sdp_enabled()
    with decode_sdpa_kernels(torch.device("cpu")):
        assert torch.backends.cuda.cudnn_sdp_enabled() == before


# ------------------------------------------------------------------ the C++ loop (ragged_attention)
def _ragged_case(dtype: torch.dtype, heads: int = 6, kv_heads: int = 2, dim: int = 24):
    """Rows over slots of different lengths (one row the slots' whole capacity), everything past each row's
    length NaN: a kernel that reads one position too far returns NaN."""
    generator = torch.Generator().manual_seed(0)
    slots_count, capacity = 7, 40
    key = torch.randn(slots_count, kv_heads, capacity, dim, generator=generator).to(dtype)
    value = torch.randn(slots_count, kv_heads, capacity, dim, generator=generator).to(dtype)
    slots = torch.tensor([4, 0, 6, 2, 5])
    lengths = torch.tensor([1, 17, capacity, 9, 33])
    poisoned_key, poisoned_value = key.clone(), value.clone()
    for slot, length in zip(slots.tolist(), lengths.tolist()):
        poisoned_key[slot, :, length:] = float("nan")
        poisoned_value[slot, :, length:] = float("nan")
    queries = torch.randn(len(slots), heads, dim, generator=generator) * dim ** -0.5
    return queries, key, value, poisoned_key, poisoned_value, slots, lengths


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_the_cpp_loop_attends_each_row_over_its_own_length_and_reads_nothing_past_it(dtype):
    attend_ragged = ragged_attention.kernel()
    assert attend_ragged is not None, "the C++ kernel must build on the machines the suite runs on"
    queries, key, value, poisoned_key, poisoned_value, slots, lengths = _ragged_case(dtype)
    expected = attend(queries, key, value, slots, lengths, int(lengths.max()))  # the algebra, eagerly
    got = attend_ragged(queries, poisoned_key, poisoned_value, slots, lengths)
    assert got.dtype == torch.float32 and got.shape == queries.shape
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_the_cpp_loop_refuses_a_slot_or_length_out_of_range_with_an_error_not_a_crash():
    attend_ragged = ragged_attention.kernel()
    queries, key, value, _, _, slots, lengths = _ragged_case(torch.float32)
    with pytest.raises(RuntimeError, match="reads slot 7 of 7"):
        attend_ragged(queries, key, value, torch.tensor([4, 0, 7, 2, 5]), lengths)
    with pytest.raises(RuntimeError, match="reads 41 positions of 40"):
        attend_ragged(queries, key, value, slots, torch.tensor([1, 17, 41, 9, 33]))
    with pytest.raises(RuntimeError, match="contiguous"):
        attend_ragged(queries.transpose(1, 2), key, value, slots, lengths)
