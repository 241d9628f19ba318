"""The HTTP routes of ``distrain serve`` (Starlette). Every error is JSON ``{"error": {"type", "message"}}``
(with ``"field"`` where one field of the request is to blame).

The routes only translate: bodies into records, records into prepared instances (refused with 422
before they can join a batch), the batcher's answers and refusals into status codes. The model,
the queue and the process lifecycle live in :mod:`.predictor`, :mod:`.batcher` and :mod:`.server`.
A causal-LM archive answers ``/predict`` and the OpenAI routes (:mod:`.openai_api`) through the
:mod:`.generation_engine` instead of the batcher; each kind answers the other's routes with 404.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from distrain.data.reader import RecordError
from distrain.serving.batcher import Draining, QueueFull, RequestTimedOut
from distrain.serving.metrics import ServerMetrics
from distrain.serving.responses import ApiError, json_response

STATIC = Path(__file__).resolve().parent / "static"


@dataclass
class ServeOptions:
    max_batch_size: int = 32
    max_batch_tokens: int | None = None
    max_padding: float | None = 0.1
    max_wait_ms: float = 0.0
    max_queue: int = 256
    request_timeout_s: float = 30.0
    max_request_bytes: int = 1_048_576
    drain_timeout_s: float = 30.0
    # causal-LM archives (continuous batching): prompt tokens prefilled per decode step, cached positions
    max_prefill_tokens: int = 2048
    max_cached_tokens: int | None = None
    #: a batch runs until all its rows end before the waiting requests form the next (bench_generate's baseline)
    static_batching: bool = False
    #: the id /v1/models lists (default: the archive's file name)
    model_name: str | None = None
    #: torch's intra-op threads for a language model (default: the cores less one, for the event loop)
    torch_threads: int | None = None
    #: the floating-point type the model's weights are cast to once at load (None: the archive's)
    dtype: str | None = None
    #: how the decoding rows attend: auto, compiled (:mod:`distrain.generation.decode_attention`) or eager
    decode_attention: str = "auto"
    #: every route but /health and the demo page's files needs ``Authorization: Bearer KEY`` (:mod:`.auth`)
    api_key: str | None = field(default=None, repr=False)

    def public(self) -> dict[str, Any]:
        """The options /info shows: all but the key (only whether there is one)."""
        shown = {name: value for name, value in vars(self).items() if name != "api_key"}
        return {**shown, "api_key_required": self.api_key is not None}


@dataclass
class ServingState:
    """What the routes read; :mod:`.server` fills it in as the model loads, warms up and drains."""

    archive: str
    options: ServeOptions
    #: loading, warming up, ready, draining
    phase: str = "loading"
    predictor: Any = None
    batcher: Any = None
    #: a causal-LM archive's :class:`~distrain.serving.generation_engine.GenerationEngine` (then no batcher)
    engine: Any = None
    started: float = field(default_factory=time.time)
    metrics: ServerMetrics = None  # type: ignore[assignment]
    #: prediction requests being handled right now (the drain waits for them)
    in_flight: int = 0
    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        if self.metrics is None:
            self.metrics = ServerMetrics(lambda: self.queue_depth, lambda: self.in_flight)
        self.idle.set()

    @property
    def queue_depth(self) -> int:
        """Requests accepted and waiting for the model."""
        queue = self.engine if self.engine is not None else self.batcher
        return queue.depth if queue is not None else 0

    def prepare(self, record: Any):
        """``record`` validated and indexed by the predictor, or a 422 naming its field."""
        try:
            return self.predictor.prepare(record)
        except RecordError as error:
            extra = {"field": error.field} if error.field else {}
            raise ApiError(422, "invalid_input", str(error), **extra) from None
        except (ValueError, TypeError, KeyError) as error:
            raise ApiError(422, "invalid_input", f"{type(error).__name__}: {error}") from None


def build_app(state: ServingState) -> Starlette:
    options = state.options

    def counted(endpoint: str, prediction: bool = False):
        def wrap(handler):
            async def route(request: Request) -> Response:
                started = time.perf_counter()
                if prediction:
                    state.in_flight += 1
                    state.idle.clear()
                try:
                    response = await handler(request)
                except ApiError as error:
                    response = error.response()
                finally:
                    if prediction:
                        state.in_flight -= 1
                        if state.in_flight == 0:
                            state.idle.set()
                if state.phase == "draining":
                    # the client must not send its next request on this connection: the server closes
                    # it once the drain ends, and a request crossing that close is answered by a reset
                    response.headers["Connection"] = "close"
                status = str(response.status_code)
                state.metrics.requests.labels(endpoint, status).inc()
                state.metrics.latency.labels(endpoint, status).observe(time.perf_counter() - started)
                return response
            return route
        return wrap

    def require_accepting() -> None:
        if state.phase == "draining":
            raise ApiError(503, "draining", "the server is shutting down and accepts no new requests")
        if state.phase != "ready":
            raise ApiError(503, "not_ready", f"the model is {state.phase}; retry shortly", {"Retry-After": "1"})

    def refuse_if_full() -> None:
        """Answer an overloaded server at once, before spending time on the body."""
        if state.queue_depth >= options.max_queue:
            raise ApiError(503, "overloaded", f"the queue is full ({options.max_queue} requests waiting); retry shortly",
                           {"Retry-After": "1"})

    async def read_json(request: Request) -> Any:
        content_type = request.headers.get("content-type", "")
        if content_type.split(";")[0].strip().lower() != "application/json":
            raise ApiError(415, "unsupported_media_type",
                           f"expected Content-Type: application/json, got {content_type or 'none'}")
        limit = options.max_request_bytes
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise ApiError(413, "body_too_large", f"the body has {declared} bytes; the limit is {limit} (--max-request-bytes)")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise ApiError(413, "body_too_large", f"the body exceeds {limit} bytes (--max-request-bytes)")
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError) as error:
            raise ApiError(400, "malformed_json", f"the body is not valid JSON: {error}") from None

    prepare = state.prepare
    from distrain.serving.openai_api import LanguageModelRoutes

    language_model = LanguageModelRoutes(state, read_json)

    def require_classifier(request: Request) -> None:
        if state.engine is not None:
            raise ApiError(404, "not_found", f"{request.url.path}: a language model answers POST /predict one prompt "
                                             "at a time and the OpenAI routes (POST /v1/completions); it has no batch route")

    async def compute(prepared) -> Any:
        try:
            return await state.batcher.submit(prepared, prepared.length)
        except QueueFull as error:
            raise ApiError(503, "overloaded", f"{error}; retry shortly", {"Retry-After": "1"}) from None
        except Draining as error:
            raise ApiError(503, "draining", str(error)) from None
        except RequestTimedOut as error:
            raise ApiError(504, "timeout", f"{error} (--request-timeout-s)") from None
        except Exception as error:  # noqa: BLE001 - the model failed on this input alone
            raise ApiError(500, "model_error", f"the model failed on this input: {type(error).__name__}: {error}") from None

    @counted("predict", prediction=True)
    async def predict(request: Request) -> Response:
        require_accepting()
        refuse_if_full()
        record = await read_json(request)
        if state.engine is not None:
            return await language_model.predict(request, record)
        return json_response(await compute(prepare(record)))

    @counted("predict_batch", prediction=True)
    async def predict_batch(request: Request) -> Response:
        require_accepting()
        require_classifier(request)
        records = await read_json(request)
        if not isinstance(records, list):
            raise ApiError(422, "invalid_input", "expected a JSON list of records")
        predictions: list[Any] = [None] * len(records)
        errors: list[dict[str, Any]] = []
        waiting: dict[int, Any] = {}
        for index, record in enumerate(records):
            try:
                waiting[index] = compute(prepare(record))
            except ApiError as error:
                errors.append({"index": index, "status": error.status, "type": error.kind, "message": error.message, **error.extra})
        outcomes = await asyncio.gather(*waiting.values(), return_exceptions=True)
        for index, outcome in zip(waiting, outcomes):
            if isinstance(outcome, ApiError):
                errors.append({"index": index, "status": outcome.status, "type": outcome.kind, "message": outcome.message})
            elif isinstance(outcome, BaseException):
                raise outcome
            else:
                predictions[index] = outcome
        errors.sort(key=lambda error: error["index"])
        return json_response({"predictions": predictions, "errors": errors})

    @counted("health")
    async def health(request: Request) -> Response:
        return json_response({"status": "alive", "phase": state.phase})

    @counted("ready")
    async def ready(request: Request) -> Response:
        if state.phase != "ready":
            raise ApiError(503, "not_ready", f"the server is {state.phase}")
        return json_response({"status": "ready"})

    @counted("info")
    async def info(request: Request) -> Response:
        if state.predictor is None:
            raise ApiError(503, "not_ready", f"the model is {state.phase}", {"Retry-After": "1"})
        return json_response({"archive": state.archive, **state.predictor.describe(), "options": options.public()})

    def generation(endpoint: str, handler):
        @counted(endpoint, prediction=True)
        async def route(request: Request) -> Response:
            language_model.require_language_model(request)
            require_accepting()
            refuse_if_full()
            return await handler(request)
        return route

    @counted("models")
    async def models(request: Request) -> Response:
        if state.predictor is None:
            raise ApiError(503, "not_ready", f"the model is {state.phase}", {"Retry-After": "1"})
        return await language_model.models(request)

    async def metrics(request: Request) -> Response:
        body, content_type = state.metrics.render()
        return Response(body, headers={"Content-Type": content_type})

    async def demo(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def http_error(request: Request, error: HTTPException) -> Response:
        kind = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        message = f"{request.method} {request.url.path}: {error.detail}"
        return ApiError(error.status_code, kind, message, dict(error.headers or {})).response()

    async def server_error(request: Request, error: Exception) -> Response:
        return ApiError(500, "internal_error", f"{type(error).__name__}: {error}").response()

    routes = [
        Route("/", demo, methods=["GET"]),
        Route("/predict", predict, methods=["POST"]),
        Route("/predict_batch", predict_batch, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/ready", ready, methods=["GET"]),
        Route("/info", info, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/v1/completions", generation("completions", language_model.completions), methods=["POST"]),
        Route("/v1/chat/completions", generation("chat_completions", language_model.chat_completions), methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = []
    if options.api_key is not None:
        from distrain.serving.auth import RequireApiKey

        middleware.append(Middleware(RequireApiKey, key=options.api_key, on_refused=state.metrics.unauthorized.inc))
    return Starlette(routes=routes, middleware=middleware,
                     exception_handlers={HTTPException: http_error, Exception: server_error})
