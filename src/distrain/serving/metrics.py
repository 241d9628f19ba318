"""The server's Prometheus metrics, in a registry of its own (several servers may share a process in tests)."""

from __future__ import annotations

from typing import Callable

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
TOKEN_GAP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.5, 5.0)
PADDING_BUCKETS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)


class ServerMetrics:
    def __init__(self, queue_depth: Callable[[], int], in_flight: Callable[[], int]) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("distrain_requests", "HTTP requests answered, by endpoint and status", ["endpoint", "status"], registry=r)
        self.latency = Histogram("distrain_request_latency_seconds", "time from request to answer", ["endpoint", "status"],
                                 buckets=LATENCY_BUCKETS, registry=r)
        self.queue_wait = Histogram("distrain_queue_wait_seconds", "time a prediction waited before its batch started",
                                    buckets=LATENCY_BUCKETS, registry=r)
        self.inference = Histogram("distrain_inference_seconds", "model time per batch", buckets=LATENCY_BUCKETS, registry=r)
        self.batch_size = Histogram("distrain_batch_size", "requests per batch", buckets=BATCH_BUCKETS, registry=r)
        self.padding = Histogram("distrain_batch_padding_ratio", "share of a batch's padded tokens that are padding",
                                 buckets=PADDING_BUCKETS, registry=r)
        self.unauthorized = Counter("distrain_unauthorized_requests", "requests refused with 401 (no or a wrong "
                                    "API key) before any route ran", registry=r)
        self.split_batches = Counter("distrain_batches_split", "batches that raised and were re-run one item at a time", registry=r)
        depth = Gauge("distrain_queue_depth", "predictions waiting for the model", registry=r)
        depth.set_function(lambda: float(queue_depth()))
        active = Gauge("distrain_requests_in_flight", "prediction requests accepted and not yet answered", registry=r)
        active.set_function(lambda: float(in_flight()))
        # causal-LM archives (continuous batching)
        self.time_to_first_token = Histogram("distrain_time_to_first_token_seconds",
                                             "time from a generation request's arrival to its first token",
                                             buckets=LATENCY_BUCKETS, registry=r)
        self.inter_token_latency = Histogram("distrain_inter_token_latency_seconds",
                                             "time between a request's consecutive tokens", buckets=TOKEN_GAP_BUCKETS,
                                             registry=r)
        self.generated_tokens = Counter("distrain_generated_tokens", "tokens decoded (the rate is tokens/s)", registry=r)
        self.running_batch = Gauge("distrain_running_batch_size", "requests in the running batch after the last step",
                                   registry=r)
        self.cancelled = Counter("distrain_generations_cancelled", "generation requests ended before their end token "
                                 "or budget (their rows left the batch), by reason: disconnected, stop_string, timeout",
                                 ["reason"], registry=r)
        self.cached_tokens = Gauge("distrain_cached_tokens", "key-value positions the running batch caches, padding "
                                                            "included", registry=r)

    def observe_batch(self, report) -> None:
        """Record one :class:`~distrain.serving.batcher.BatchReport`."""
        from distrain.serving.batcher import padded_tokens

        self.inference.observe(report.seconds)
        self.batch_size.observe(len(report.lengths))
        padded = padded_tokens(report.lengths)
        self.padding.observe(1.0 - sum(report.lengths) / padded if padded else 0.0)
        for wait in report.queue_waits:
            self.queue_wait.observe(wait)
        if report.failed_together:
            self.split_batches.inc()

    def observe_step(self, rows: int, cached: int, tokens: int) -> None:
        """After a decode step (called on the engine thread; prometheus_client is thread-safe)."""
        self.running_batch.set(rows)
        if tokens:
            self.batch_size.observe(tokens)  # rows of this decode step
        self.cached_tokens.set(cached)
        self.generated_tokens.inc(tokens)

    def observe_token(self, stream, now: float) -> None:
        """A token reached its request's stream (on the event loop)."""
        if stream.first_token_at is None:
            self.time_to_first_token.observe(now - stream.submitted)
        else:
            self.inter_token_latency.observe(now - stream.last_token_at)

    def render(self) -> tuple[bytes, str]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST
