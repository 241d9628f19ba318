"""``allennlp.common.testing``: what AllenNLP-style test suites are written with.

``AllenNlpTestCase`` (a scratch folder per test, the fixtures' place), ``ModelTestCase`` (train, save and load a
model from its config), ``run_distributed_test`` and ``global_distributed_metric`` (a metric read over CPU
workers), the device marks (``multi_device``, ``requires_gpu``, ``requires_multi_gpu``, ``cpu_or_gpu``) and two
assertions.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from distrain.allennlp.common.testing.distributed_test import run_distributed_test
from distrain.allennlp.common.testing.test_case import AllenNlpTestCase

_DEVICES = ["cuda:0"] if torch.cuda.is_available() else ["cpu"]


def __getattr__(name: str) -> Any:
    # ModelTestCase builds on the whole training stack: imported when a suite asks for it, not with the marks
    if name == "ModelTestCase":
        from distrain.allennlp.common.testing.model_test_case import ModelTestCase

        return ModelTestCase
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def multi_device(test: Callable) -> Callable:
    """Run ``test`` with a ``device`` argument: ``"cuda:0"`` where a GPU is present, else ``"cpu"``."""
    return pytest.mark.parametrize("device", _DEVICES)(pytest.mark.gpu(test))


def requires_gpu(test: Callable) -> Callable:
    return pytest.mark.gpu(pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")(test))


def requires_multi_gpu(test: Callable) -> Callable:
    return pytest.mark.gpu(pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 CUDA devices")(test))


def cpu_or_gpu(test: Callable) -> Callable:
    return pytest.mark.gpu(test)


def assert_metrics_values(metrics: dict[str, Any], desired_values: dict[str, Any], rtol: float = 1e-4,
                          atol: float = 1e-5) -> None:
    """Each metric (one level of nested dicts allowed) close to the one desired."""
    for key, value in metrics.items():
        desired = desired_values[key]
        if isinstance(value, dict) and isinstance(desired, dict):
            for subkey, subvalue in value.items():
                _assert_close(subvalue, desired[subkey], rtol, atol)
        else:
            _assert_close(value, desired, rtol, atol)


def _assert_close(actual: Any, desired: Any, rtol: float, atol: float) -> None:
    actual, desired = torch.as_tensor(actual, dtype=torch.float64), torch.as_tensor(desired, dtype=torch.float64)
    torch.testing.assert_close(actual, desired, rtol=rtol, atol=atol, check_dtype=False)


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """torch's retired ``torch.testing.assert_allclose``, which AllenNLP's tests import from here: numbers, lists,
    arrays or tensors close within ``rtol``/``atol`` (torch's defaults for the dtype when not given)."""
    actual = torch.as_tensor(actual)
    expected = torch.as_tensor(expected, dtype=actual.dtype) if not isinstance(expected, torch.Tensor) else expected
    if (rtol is None) != (atol is None):
        rtol, atol = (rtol or 0.0), (atol or 0.0)
    torch.testing.assert_close(actual, expected.to(actual.dtype), rtol=rtol, atol=atol, equal_nan=equal_nan,
                               msg=msg or None, check_device=False)


def global_distributed_metric(global_rank: int, world_size: int, gpu_id: int | torch.device, metric: Any,
                              metric_kwargs: dict[str, list[Any]], desired_values: Any,
                              exact: bool | tuple[float, float] = True, number_of_runs: int = 1) -> None:
    """Feed ``metric`` this rank's share of ``metric_kwargs`` (each a list indexed by rank), then check the value
    read over all workers; ``exact`` is ``True`` (no tolerance), ``False`` (a small one) or ``(rtol, atol)``."""
    kwargs = {name: values[global_rank] for name, values in metric_kwargs.items()}
    for _ in range(number_of_runs):
        metric(**kwargs)
    metrics = metric.get_metric(False)
    if not isinstance(metrics, dict) and not isinstance(desired_values, dict):
        metrics, desired_values = {"metric_value": metrics}, {"metric_value": desired_values}
    rtol, atol = (0.0, 0.0) if exact is True else (1e-4, 1e-5) if exact is False else exact
    assert_metrics_values(metrics, desired_values, rtol, atol)


def assert_equal_parameters(old_module: torch.nn.Module, new_module: torch.nn.Module, ignore_missing: bool = False,
                            mapping: dict[str, str] | None = None) -> set[str]:
    """Every parameter of ``new_module`` (its name rewritten by ``mapping``) equals ``old_module``'s of that
    name; returns the names only ``old_module`` has."""
    old_parameters = dict(old_module.named_parameters())
    only_in_old = set(old_parameters)
    for name, parameter in new_module.named_parameters():
        for key, value in (mapping or {}).items():
            name = name.replace(key, value)
        if ignore_missing and name not in old_parameters:
            continue
        only_in_old.remove(name)
        assert torch.allclose(old_parameters[name], parameter), f"parameter {name} differs"
    return only_in_old


__all__ = ["AllenNlpTestCase", "ModelTestCase", "assert_allclose", "assert_equal_parameters", "assert_metrics_values", "cpu_or_gpu",
           "global_distributed_metric", "multi_device", "requires_gpu", "requires_multi_gpu", "run_distributed_test"]
