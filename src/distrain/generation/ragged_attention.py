"""The decoding rows' attention on CPU as a small C++ loop, each row over its own length.

:mod:`.decode_attention`'s Inductor loop reads every row as far as the batch's longest row (its loop nest has one
bound for all rows), masked past each row's length: on bench_slots' workload that is 1.63x the positions the rows
hold. :file:`ragged_attention.cpp` reads each row's own keys and values once, for every head of its group, and
nothing past its length. In a one-off microbenchmark (32 rows of 8 to 256 positions, 8 heads of 64, one thread) it took 1.28 against 3.51 ms
(float32) and 1.03 against 2.05 ms (bfloat16) on this project's AVX-512 EPYC (Zen 4); on the 40.9 M Llama alone
(``scripts/bench_slots.py``, ``slots_ragged_vs_inductor_attention=``) 1.25x the tokens/s in float32 and 1.12x in
bfloat16. Its float32 reads run at about the machine's one-core streaming rate (15 against 14 GB/s for
``torch.sum`` over 256 MB).

It is built at first use by ``torch.utils.cpp_extension`` (a C++ compiler and ninja; some 30 s, cached
afterwards in torch's extensions folder) for this machine's CPU (``-march=native``): the build's name
carries a digest of the CPU's flags, so a home folder shared by different machines keeps one build each.
:func:`kernel` is None, with the reason logged, where it cannot be built; the batch then uses the Inductor
loop.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import platform
from pathlib import Path
from typing import Callable

import torch

logger = logging.getLogger(__name__)

SOURCE = Path(__file__).with_suffix(".cpp")


def _cpu_digest() -> str:
    """A short digest of what ``-march=native`` compiles for: the CPU's flags (Linux), else its name."""
    described = platform.machine() + platform.processor()
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
        described += flags
    except (OSError, StopIteration):
        pass
    return hashlib.sha256((described + torch.__version__).encode()).hexdigest()[:12]


@functools.cache
def kernel() -> Callable[..., torch.Tensor] | None:
    """``torch.ops.distrain.ragged_decode_attention(queries, key, value, slots, lengths)`` (see
    :file:`ragged_attention.cpp`), built for this machine on first use; None where it cannot be built here (no
    compiler, no ninja)."""
    try:
        from torch.utils.cpp_extension import load

        load(name=f"distrain_ragged_attention_{_cpu_digest()}", sources=[str(SOURCE)], is_python_module=False,
             extra_cflags=["-O3", "-march=native", "-fopenmp-simd"], verbose=False)
    except Exception as error:  # noqa: BLE001 - any failure to build means: the Inductor loop instead
        logger.info("the decoding rows attend through the Inductor loop: the C++ kernel cannot be built here "
                    "(%s: %s)", type(error).__name__, str(error).splitlines()[0][:200] if str(error) else "")
        return None
    return torch.ops.distrain.ragged_decode_attention
