"""PowerSGD (Vogels et al. 2019): each gradient matrix sent as a rank-``rank`` product P Qᵀ.

torch's ``powerSGD_hook`` does the work: plain all-reduce for the first ``start_iter`` steps, then
low-rank factors with error feedback (what the approximation missed is added to the next step's
gradient). Matrices too small to gain ``min_compression_rate`` and 1-D tensors (biases) are sent
whole. The bytes reported are those of the factors plus the uncompressed tensors, as torch's hook
decides them. The error-feedback memory is not checkpointed: a resumed run rebuilds it.
"""

from __future__ import annotations

from typing import Annotated, Any, Callable

from annotated_types import Ge

from distrain.distributed.compression import GradientCompression


@GradientCompression.register("powersgd")
class PowerSGDCompression(GradientCompression):
    """PowerSGD: each gradient matrix sent as rank-``rank`` factors, with error feedback."""

    def __init__(
        self,
        rank: Annotated[int, Ge(1)] = 2,
        start_iter: Annotated[int, Ge(2)] = 10,
        error_feedback: bool = True,
        min_compression_rate: Annotated[float, Ge(1)] = 2.0,
    ) -> None:
        self.rank = rank
        self.start_iter = start_iter
        self.error_feedback = error_feedback
        self.min_compression_rate = min_compression_rate

    def install(self, ddp: Any, moved: Callable[[int], None]) -> None:
        from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook

        state = powerSGD_hook.PowerSGDState(
            process_group=None, matrix_approximation_rank=self.rank, start_powerSGD_iter=self.start_iter,
            min_compression_rate=self.min_compression_rate, use_error_feedback=self.error_feedback,
            warm_start=True, compression_stats_logging_frequency=10**9,
        )

        def hook(state, bucket):  # no annotations: DDP checks them against its own types
            moved(self.bytes_sent(state, bucket))
            return powerSGD_hook.powerSGD_hook(state, bucket)

        ddp.register_comm_hook(state, hook)

    def bytes_sent(self, state: Any, bucket: Any) -> int:
        """What torch's hook sends for ``bucket`` this step (it counts its iterations per last bucket)."""
        buffer = bucket.buffer()
        if state.iter < state.start_powerSGD_iter:
            return buffer.numel() * buffer.element_size()
        total = 0
        for tensor in bucket.gradients():
            matrix = tensor.view(tensor.shape[0], -1) if tensor.ndim > 1 else None
            if matrix is None:
                total += tensor.numel() * tensor.element_size()
                continue
            n, m = matrix.shape
            r = min(n, m, self.rank)
            if n * m >= (n + m) * r * self.min_compression_rate:
                total += (n + m) * r * tensor.element_size()
            else:
                total += tensor.numel() * tensor.element_size()
        return total
