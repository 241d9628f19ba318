"""Which of torch's SDPA kernels a decode step may use (pure: torch's backend flags, no GPU needed)."""

import torch

from distrain.generation.decode_attention import decode_sdpa_kernels


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
