"""Does this machine have the GPUs a config names? Asked before any data is read.

``distributed.cuda_devices: [0, 1, 2, 3]`` (or AllenNLP's ``trainer.cuda_device: 0``) on a machine
without those GPUs used to fail only in the workers, after the data was read, with torch's own
``AttributeError``. ``train`` and ``check`` refuse it up front, naming what the machine has;
``check --world-size N`` plans for another machine and only notes it.
"""

from __future__ import annotations

from typing import Any

from distrain.config.errors import Problem


def visible_gpus() -> list[str]:
    """The names of the CUDA devices this process can use (``CUDA_VISIBLE_DEVICES`` respected)."""
    import torch

    if not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(index) for index in range(torch.cuda.device_count())]


def describe(gpus: list[str]) -> str:
    if not gpus:
        return "none"
    return f"{len(gpus)}: " + ", ".join(f"{index} ({name})" for index, name in enumerate(gpus))


def missing_gpu_problems(resolved: Any, gpus: list[str] | None = None) -> list[Problem]:
    """A problem when the config's GPU ids are not all on this machine (``gpus``: its devices)."""
    if resolved.plan.arguments.get("distributed") is not None:
        path, wanted = "distributed.cuda_devices", resolved.distributed.cuda_devices
        remedy = "use -1 for CPU processes"
    elif resolved.cuda_device is not None:
        path, wanted, remedy = "trainer.cuda_device", [resolved.cuda_device], "use -1 for the CPU"
    else:
        return []
    if all(device < 0 for device in wanted):
        return []
    gpus = visible_gpus() if gpus is None else gpus
    if all(device < len(gpus) for device in wanted if device >= 0):
        return []
    shown = wanted if path.startswith("distributed") else wanted[0]
    return [Problem(path, f"{shown} names GPUs this machine does not have (it has {describe(gpus)}); {remedy}")]
