"""AllenNLP's ``distributed.ddp_accelerator`` is read as the strategy it names (``torch``: ddp, ``fairscale_fsdp``:
fsdp, its ``mixed_precision`` float16 parameters and reduction), and a block naming it beside ``strategy``, or a
key of the other kind of accelerator, is one problem at its key path. (Trained under it:
tests/allennlp/test_allennlp_t5.py, the ``t5_cnn_dm`` config on 2 FSDP workers.)"""

from __future__ import annotations

from distrain.config.schema import resolve_object
from distrain.distributed.config import DistributedConfig
from distrain.distributed.strategies.ddp import DistributedDataParallelStrategy
from distrain.distributed.strategies.fsdp import FullyShardedDataParallelStrategy
from distrain.distributed.world import SINGLE


def _resolved(block: dict) -> tuple[DistributedConfig | None, list]:
    problems: list = []
    plan = resolve_object(DistributedConfig, {"cuda_devices": [-1, -1], **block}, "distributed", problems)
    config = plan.build() if not problems else None
    return config, problems + (config.problems() if config is not None else [])


def test_fairscale_fsdp_is_the_fsdp_strategy_with_float16_mixed_precision():
    config, problems = _resolved({"ddp_accelerator": {"type": "fairscale_fsdp", "mixed_precision": True}})
    assert not problems
    strategy = config.strategy.construct(world=SINGLE)
    assert isinstance(strategy, FullyShardedDataParallelStrategy) and strategy.reshard_after_forward
    assert (strategy.mixed_precision.param_dtype, strategy.mixed_precision.reduce_dtype) == ("float16", "float16")


def test_torch_accelerator_is_ddp_with_its_find_unused_parameters():
    config, problems = _resolved({"ddp_accelerator": {"type": "torch", "find_unused_parameters": True}})
    assert not problems
    strategy = config.strategy.construct(world=SINGLE)
    assert isinstance(strategy, DistributedDataParallelStrategy) and strategy.find_unused_parameters


def test_ddp_accelerator_beside_strategy_or_with_the_other_kinds_key_is_one_problem_at_its_path():
    _, both = _resolved({"ddp_accelerator": {"type": "fairscale_fsdp"}, "strategy": {"type": "ddp"}})
    assert [problem.path for problem in both] == ["distributed.ddp_accelerator"]
    _, other = _resolved({"ddp_accelerator": {"type": "fairscale_fsdp", "find_unused_parameters": True}})
    assert [problem.path for problem in other] == ["distributed.ddp_accelerator.find_unused_parameters"]
