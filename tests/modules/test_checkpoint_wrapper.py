"""AllenNLP's ``checkpoint_wrapper`` (``torch``, ``fairscale``): a wrapped block recomputes its activations in
backward with the same random state, so its gradients are bit-identical to the plain block's; ``offload_to_cpu`` on
the CPU changes nothing. A model's own blocks (``t5``'s, with a ``checkpoint_wrapper``) are declared by the model
and checkpointed by ``parallelize``, as the trainer's ``activation_checkpointing`` is; tests/allennlp/test_allennlp_t5.py
trains the ``t5_cnn_dm`` config, which names ``fairscale`` with ``offload_to_cpu``."""

from __future__ import annotations

import pytest
import torch

from distrain.data.vocabulary import Vocabulary
from distrain.distributed.strategy import Parallelism
from distrain.distributed.world import SINGLE
from distrain.models.model import Model
from distrain.modules.checkpoint_wrapper import CheckpointWrapper
from distrain.modules.selection import select_modules
from distrain.plugins import import_builtins
from distrain.training.parallelize import parallelize
from support.allennlp_fixtures import OVERLAY

import_builtins()
T5_TINY = OVERLAY / "allennlp-models" / "test_fixtures" / "generation" / "t5-tiny-random"


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


class _TwoBlocks(Model):
    """A model that declares its own blocks for checkpointing, as ``t5`` does with a ``checkpoint_wrapper``."""

    def __init__(self, declared: list[str]) -> None:
        super().__init__(Vocabulary())
        self.blocks = torch.nn.ModuleList([_block(), _block()])
        self.declared = declared

    def activation_checkpoint_units(self) -> tuple[list[str], bool]:
        return self.declared, False

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.blocks[1](self.blocks[0](inputs)[:, :3].repeat(1, 2))


@pytest.mark.parametrize("declared, runs_of_each", [(["blocks.*"], 2), ([], 1)])
def test_parallelize_checkpoints_the_blocks_a_model_declares(declared, runs_of_each):
    model = _TwoBlocks(declared)
    handle = parallelize(model, Parallelism.data_parallel(SINGLE), None, compile=False)
    runs = []
    for block in model.blocks:
        block[0].register_forward_hook(lambda *_: runs.append(1))
    handle.module(torch.randn(4, 6)).pow(2).sum().backward()
    assert len(runs) == 2 * runs_of_each  # each block's forward, and (checkpointed) its recomputation


def test_t5_declares_each_encoder_and_decoder_block_for_the_wrapper_it_was_given():
    t5 = Model.by_name("t5")(Vocabulary(), model_name=str(T5_TINY), checkpoint_wrapper=CheckpointWrapper.by_name("fairscale")())
    patterns, offload = t5.activation_checkpoint_units()
    blocks = [name for found in select_modules(t5, patterns).values() for name in found]
    assert offload and len(blocks) == len(t5.t5.encoder.block) + len(t5.t5.decoder.block) > 0
    assert Model.by_name("t5")(Vocabulary(), model_name=str(T5_TINY)).activation_checkpoint_units() == ([], False)
