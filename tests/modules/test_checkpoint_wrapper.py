"""AllenNLP's ``checkpoint_wrapper`` (``torch``, ``fairscale``): a wrapped block recomputes its activations in
backward with the same random state, so its gradients are bit-identical to the plain block's; ``offload_to_cpu`` on
the CPU changes nothing. (On the ``t5`` model's blocks: tests/allennlp/test_allennlp_t5.py trains the
``t5_cnn_dm`` config, which names ``fairscale`` with ``offload_to_cpu``.)"""

from __future__ import annotations

import pytest
import torch

from distrain.modules.checkpoint_wrapper import CheckpointWrapper


def _block() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 3))


def _gradients(block: torch.nn.Module, inputs: torch.Tensor) -> list[torch.Tensor]:
    torch.manual_seed(1)  # the dropout mask
    block(inputs).pow(2).sum().backward()
    return [parameter.grad for parameter in block.parameters()]


@pytest.mark.parametrize("kind", ["torch", "fairscale"])
def test_a_wrapped_block_gives_the_plain_blocks_gradients_bit_for_bit(kind):
    inputs = torch.randn(5, 6)
    plain = _gradients(_block(), inputs)
    wrapper = CheckpointWrapper.by_name(kind)()
    assert wrapper.offload_to_cpu == (kind == "fairscale")
    block = wrapper.wrap_module(_block())
    runs = []
    block[0].register_forward_hook(lambda *_: runs.append(1))
    wrapped = _gradients(block, inputs)
    assert len(runs) == 2  # the forward, and its recomputation in backward
    assert all(torch.equal(mine, theirs) for mine, theirs in zip(wrapped, plain, strict=True))
