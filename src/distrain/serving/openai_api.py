"""The OpenAI-shaped routes of ``distrain serve`` on a causal-LM archive, and its ``/predict``.

``POST /v1/completions``, ``POST /v1/chat/completions`` (only where the tokenizer has a chat template)
and ``GET /v1/models``, in the shapes the ``openai`` client reads; ``stream: true`` answers
server-sent events (``data: {...}`` per chunk, then ``data: [DONE]``). The routes translate only: a
body is checked against a pydantic model of the request (an unknown, misspelled or mistyped field
is refused by name), its prompt tokenized as ``distrain predict`` tokenizes it, and its tokens come
from the :class:`~distrain.serving.generation_engine.GenerationEngine`. Settings a request leaves
out are the archive's ``model.generation`` (so a bare request continues as ``distrain predict`` does).

A client that goes away has its request cancelled as soon as its connection closes: its row leaves
the batch before the next decode step. A request still waiting for a place in the batch at
``--request-timeout-s`` gets 504 and is never computed.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
import uuid
from typing import Any, AsyncIterator, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from distrain.data.reader import RecordError
from distrain.serving.responses import ApiError, json_response
from distrain.serving.batcher import Draining, QueueFull, RequestTimedOut

MAX_STOP_STRINGS = 4


# ---------------------------------------------------------------------------------- requests
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    model: str | None = None
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    seed: int | None = None
    stop: str | list[str] | None = None
    stream: bool = False
    n: int = 1
    user: str | None = None  # accepted and ignored, as OpenAI's own clients may send it
    #: vLLM's extension: the choice also lists the prompt's and the completion's token ids
    return_token_ids: bool = False


class CompletionBody(_Body):
    prompt: str | list[str]


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Literal["system", "user", "assistant"]
    content: str


class ChatBody(_Body):
    messages: list[ChatMessage] = Field(min_length=1)


def parse_body(schema: type[_Body], body: Any) -> _Body:
    """``body`` as ``schema``, or an :class:`ApiError` naming the first field that is wrong."""
    from distrain.registry import suggest

    if not isinstance(body, dict):
        raise ApiError(422, "invalid_request", "expected a JSON object")
    try:
        parsed = schema.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        # a union's alternatives add their own names to the location (prompt.str, prompt.list[str])
        location = [str(part) for part in first["loc"] if not (isinstance(part, str) and ("[" in part or part in
                                                                                          ("str", "int", "float", "bool")))]
        field = ".".join(location)
        if first["type"] == "extra_forbidden":
            hint = suggest(location[-1], sorted(schema.model_fields))
            message = f"unknown field {field!r}" + (f'; did you mean "{hint}"?' if hint else " (not supported by distrain serve)")
        else:
            message = f"{field}: {first['msg']}" if field else first["msg"]
        raise ApiError(422, "invalid_request", message, field=field) from None
    if parsed.n != 1:
        raise ApiError(400, "invalid_request", f"n: distrain serve returns one choice per request, got n={parsed.n}",
                       field="n")
    stops = [parsed.stop] if isinstance(parsed.stop, str) else (parsed.stop or [])
    if len(stops) > MAX_STOP_STRINGS or any(not stop for stop in stops):
        raise ApiError(400, "invalid_request", f"stop: at most {MAX_STOP_STRINGS} non-empty strings", field="stop")
    return parsed


# ------------------------------------------------------------------------------------- text
class IncrementalText:
    """A continuation's text as its tokens arrive, ended by the first stop string.

    Each token decodes only a short window, as vLLM does (the tokens since the last emitted text,
    and the window before them for context), so a long stream costs linear time on the event loop,
    not the quadratic time of decoding the whole continuation at every token. :meth:`add` returns
    what can be sent now: an incomplete character or the start of a stop string waits. :attr:`text`
    is the whole continuation as ``distrain predict`` decodes it (end tokens dropped, special tokens
    skipped), cut at a stop string."""

    def __init__(self, tokenizer: Any, end_ids: set[int], stops: list[str]) -> None:
        self.tokenizer, self.end_ids, self.stops = tokenizer, end_ids, stops
        self.tokens: list[int] = []
        self.decoded = ""  # the text decoded so far, only ever extended
        self.sent = ""  # the part of it handed out
        self._prefix_offset = self._read_offset = 0
        self.stopped_text: str | None = None

    @property
    def text(self) -> str:
        if self.stopped_text is not None:
            return self.stopped_text
        return self.tokenizer.decode(self.tokens, skip_special_tokens=True)

    def add(self, token: int) -> tuple[str, bool]:
        """The text ready to send after ``token``, and whether a stop string ended the continuation."""
        if token not in self.end_ids:
            self.tokens.append(token)
            decode = lambda ids: self.tokenizer.decode(ids, skip_special_tokens=True)  # noqa: E731
            before = decode(self.tokens[self._prefix_offset:self._read_offset])
            after = decode(self.tokens[self._prefix_offset:])
            if len(after) > len(before) and not after.endswith("\ufffd"):  # not half a character
                self.decoded += after[len(before):]
                self._prefix_offset, self._read_offset = self._read_offset, len(self.tokens)
        # a stop string cannot start inside the text sent: its start would have been held back
        found = [index for index in (self.decoded.find(stop, len(self.sent)) for stop in self.stops) if index >= 0]
        if found:
            self.stopped_text = self.decoded[:min(found)]
            return self._take(self.stopped_text), True
        held = max((k for stop in self.stops for k in range(1, len(stop)) if self.decoded.endswith(stop[:k])), default=0)
        return self._take(self.decoded[:len(self.decoded) - held]), False

    def rest(self) -> str:
        """What is left to send once the continuation ended: the whole text decoded at once, less what was
        sent (nothing, in the rare case where a tokenizer's clean-up rewrote text already sent)."""
        return self._take(self.text)

    def _take(self, ready: str) -> str:
        if not ready.startswith(self.sent):
            return ""
        delta, self.sent = ready[len(self.sent):], ready
        return delta


# ------------------------------------------------------------------------------ the routes
class LanguageModelRoutes:
    """The handlers; ``state`` is the server's :class:`~distrain.serving.app.ServingState`."""

    def __init__(self, state: Any, read_json) -> None:
        self.state, self.read_json = state, read_json

    @property
    def model_name(self) -> str:
        return self.state.options.model_name or self.state.archive.rsplit("/", 1)[-1]

    def require_language_model(self, request: Request) -> None:
        predictor = self.state.predictor
        if predictor is not None and not predictor.generates:
            raise ApiError(404, "not_found", f"{request.url.path}: this archive's model ({type(predictor.model).__name__}) "
                                             "does not generate text; it answers POST /predict and /predict_batch")

    # ----------------------------------------------------------------------------- settings
    def settings(self, body: _Body) -> tuple[Any, int]:
        """The request's generation settings (the archive's where it gives none) and its sample number."""
        import dataclasses

        defaults = self.state.predictor.model.generation
        chosen = {"max_new_tokens": body.max_tokens, "temperature": body.temperature, "top_p": body.top_p,
                  "seed": body.seed}
        settings = dataclasses.replace(defaults, **{k: v for k, v in chosen.items() if v is not None})
        # no seed: a sampled request draws differently each time, as OpenAI's do
        number = secrets.randbits(30) if body.seed is None and settings.temperature > 0 else 0
        return settings, number

    def check_room(self, body: _Body, ids: list[int]) -> None:
        """An explicit ``max_tokens`` that cannot fit after the prompt is refused, as OpenAI's API and vLLM
        refuse it, rather than silently cut short (the archive's default is capped at the context)."""
        context = self.state.predictor.model.context_length()
        if body.max_tokens is not None and context is not None and len(ids) + body.max_tokens > context:
            raise ApiError(400, "invalid_request", f"max_tokens: {body.max_tokens} new tokens after a prompt of "
                                                   f"{len(ids)} exceed the model's context of {context} tokens "
                                                   f"(at most {context - len(ids)} fit)", field="max_tokens")

    def check_model(self, body: _Body) -> None:
        if body.model is not None and body.model != self.model_name:
            raise ApiError(404, "model_not_found", f"model {body.model!r} is not served here; GET /v1/models lists "
                                                   f"{self.model_name!r}", field="model")

    # ---------------------------------------------------------------------------- handlers
    async def models(self, request: Request) -> Response:
        self.require_language_model(request)
        return json_response({"object": "list", "data": [
            {"id": self.model_name, "object": "model", "created": int(self.state.started), "owned_by": "distrain"}]})

    async def completions(self, request: Request) -> Response:
        self.require_language_model(request)
        body = parse_body(CompletionBody, await self.read_json(request))
        prompts = [body.prompt] if isinstance(body.prompt, str) else body.prompt
        if len(prompts) != 1:
            raise ApiError(400, "invalid_request", f"prompt: one prompt per request, got a list of {len(prompts)}",
                           field="prompt")
        self.check_model(body)
        try:
            ids = self.state.predictor.prompt_ids(prompts[0])
        except RecordError as error:
            raise ApiError(400, "invalid_request", f"prompt: {error}", field="prompt") from None
        return await self.answer(request, body, ids, chat=False)

    async def chat_completions(self, request: Request) -> Response:
        self.require_language_model(request)
        body = parse_body(ChatBody, await self.read_json(request))
        self.check_model(body)
        try:
            ids = self.state.predictor.chat_prompt_ids([message.model_dump() for message in body.messages])
        except RecordError as error:
            raise ApiError(400, "invalid_request", str(error), field=error.field or "messages") from None
        return await self.answer(request, body, ids, chat=True)

    async def predict(self, request: Request, record: Any) -> Response:
        """``/predict`` on an LM archive: the line ``distrain predict`` writes for ``{"prompt": ...}``."""
        from distrain.generation.decoding import Request as Generation

        prepared = self.state.prepare(record)
        ids = prepared.instance["input_ids"].ids.tolist()
        model = self.state.predictor.model
        stream = self.submit(Generation(ids, model.generation, 0))
        tokens, finish_reason = [], "length"
        async for event in self.until_done(request, stream):
            tokens.append(event.token)
            finish_reason = event.finish_reason or finish_reason
        ends, _, _ = self.state.predictor.generation_setup()
        return json_response(model.completion_record(self.state.predictor.tokenizer, ends, tokens, finish_reason))

    # ------------------------------------------------------------------------------- answers
    def submit(self, generation: Any):
        try:
            return self.state.engine.submit(generation)
        except QueueFull as error:
            raise ApiError(503, "overloaded", f"{error}; retry shortly", {"Retry-After": "1"}) from None
        except Draining as error:
            raise ApiError(503, "draining", str(error)) from None

    async def until_done(self, request: Request, stream) -> AsyncIterator[Any]:
        """The stream's token events while the client stays; cancelled if it goes, 504 if it waits too long."""
        watcher = asyncio.get_running_loop().create_task(_cancel_on_disconnect(request, self.state.engine, stream))
        try:
            async for event in self.events(stream):
                yield event
        finally:
            watcher.cancel()
            self.state.engine.cancel(stream)

    async def events(self, stream) -> AsyncIterator[Any]:
        try:
            async for event in stream:
                if event.error is not None:
                    raise ApiError(500, "model_error", f"the model failed: {type(event.error).__name__}: {event.error}")
                yield event
                if event.finish_reason is not None:
                    return
        except RequestTimedOut as error:
            self.state.engine.cancel(stream, "timeout")
            raise ApiError(504, "timeout", f"{error} (--request-timeout-s)") from None

    async def answer(self, request: Request, body: _Body, ids: list[int], chat: bool) -> Response:
        from distrain.generation.decoding import Request as Generation

        settings, number = self.settings(body)
        self.check_room(body, ids)
        stops = [body.stop] if isinstance(body.stop, str) else (body.stop or [])
        ends, _, _ = self.state.predictor.generation_setup()
        text = IncrementalText(self.state.predictor.tokenizer, ends, stops)
        stream = self.submit(Generation(ids, settings, number))
        shape = ChunkShape(f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}", self.model_name, chat)
        events = self.until_done(request, stream)
        if not body.stream:
            tokens, finish_reason = [], "length"
            async for event in events:
                tokens.append(event.token)
                _, stopped = text.add(event.token)
                finish_reason = "stop" if stopped else (event.finish_reason or finish_reason)
                if stopped:
                    self.state.engine.cancel(stream, "stop_string")
                    break
            await events.aclose()
            usage = {"prompt_tokens": len(ids), "completion_tokens": len(tokens), "total_tokens": len(ids) + len(tokens)}
            answer = shape.whole(text.text, finish_reason, usage)
            if body.return_token_ids:
                answer["choices"][0].update(prompt_token_ids=ids, token_ids=tokens)
            return json_response(answer)
        # wait for the first token before answering 200, so a refusal or a timeout still gets its status
        try:
            first = await events.__anext__()
        except StopAsyncIteration:  # the client went away before its first token
            return Response(status_code=499)
        self.state.in_flight += 1  # the drain waits for the stream as for any request
        self.state.idle.clear()
        return EventStream(self.sse(stream, events, first, text, shape), lambda: self.stream_closed(stream))

    def stream_closed(self, stream) -> None:
        self.state.engine.cancel(stream)  # nothing to do unless the client left before the first chunk was sent
        self.state.in_flight -= 1
        if self.state.in_flight == 0:
            self.state.idle.set()

    async def sse(self, stream, events, first, text: IncrementalText, shape: ChunkShape) -> AsyncIterator[str]:
        try:
            if shape.chat:
                yield shape.sse(shape.chunk(None, None, role=True))
            event: Any = first
            while True:
                delta, stopped = text.add(event.token)
                finish_reason = "stop" if stopped else event.finish_reason
                if stopped:
                    self.state.engine.cancel(stream, "stop_string")
                if finish_reason is not None:
                    delta += text.rest()
                if delta or finish_reason is not None:
                    yield shape.sse(shape.chunk(delta, finish_reason))
                if finish_reason is not None:
                    break
                try:
                    event = await events.__anext__()
                except StopAsyncIteration:  # cancelled
                    return
                except ApiError as error:
                    yield shape.sse({"error": {"type": error.kind, "message": error.message}})
                    return
            yield "data: [DONE]\n\n"
        finally:
            await events.aclose()


class EventStream(StreamingResponse):
    """Server-sent events whose end is always noticed: ``on_close`` runs once the response is over, however
    it ended (a client that leaves before the first chunk is sent never starts the generator, whose own
    ``finally`` would then never run)."""

    def __init__(self, events: AsyncIterator[str], on_close) -> None:
        super().__init__(events, media_type="text/event-stream", headers={"Cache-Control": "no-cache",
                                                                         "X-Accel-Buffering": "no"})
        self.on_close = on_close

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            try:
                await self.body_iterator.aclose()
            finally:
                self.on_close()


class ChunkShape:
    """OpenAI's response objects: a text completion or a chat completion, whole or as stream chunks."""

    def __init__(self, identifier: str, model: str, chat: bool) -> None:
        self.id, self.model, self.chat, self.created = identifier, model, chat, int(time.time())

    def _envelope(self, kind: str, choice: dict) -> dict:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model, "choices": [choice]}

    def whole(self, text: str, finish_reason: str, usage: dict) -> dict:
        if self.chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}
            return {**self._envelope("chat.completion", choice), "usage": usage}
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
        return {**self._envelope("text_completion", choice), "usage": usage}

    def chunk(self, text: str | None, finish_reason: str | None, role: bool = False) -> dict:
        if self.chat:
            delta = {"role": "assistant", "content": ""} if role else ({"content": text} if text else {})
            return self._envelope("chat.completion.chunk", {"index": 0, "delta": delta, "finish_reason": finish_reason})
        return self._envelope("text_completion", {"index": 0, "text": text or "", "logprobs": None,
                                                  "finish_reason": finish_reason})

    @staticmethod
    def sse(payload: dict) -> str:
        return f"data: {json.dumps(payload)}\n\n"


async def _cancel_on_disconnect(request: Request, engine: Any, stream: Any) -> None:
    """Wait for the client to close its connection, then cancel its request (the body was read already)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            engine.cancel(stream)
            return
