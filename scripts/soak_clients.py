"""The clients of the serving soak (scripts/soak_serve.py), loopback only: each behaviour is one coroutine that
sends what a real client (or a careless or hostile one) sends and tallies what came back.

A connection the server resets or closes without an answer is a ``reset``; the connections a client drops on
purpose (a stream abandoned half-way) are not. Latencies are kept for the well-formed requests only.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import httpx

TEXTS = ["good great film, loved it", "awful and dull, I hated it", "it was fine", "the plot was poor but the actor "
         "was superb", "happy ending, nice story", "sad, bad, terrible movie"]
PROMPTS = ["good great", "the movie was", "bad awful", "a fine story and", "the actor"]


@dataclass
class Tally:
    """What the clients saw, by window (``window`` is set by the caller as time passes)."""

    window: int = 0
    statuses: Counter = field(default_factory=Counter)
    resets: Counter = field(default_factory=Counter)
    latencies: dict = field(default_factory=lambda: defaultdict(list))
    dropped_streams: int = 0

    def answered(self, kind: str, status: int, seconds: float | None = None) -> None:
        self.statuses[(kind, status)] += 1
        if seconds is not None and status == 200:
            self.latencies[(self.window, kind)].append(seconds)

    def reset(self, kind: str, error: BaseException) -> None:
        self.resets[(kind, f"{type(error).__name__}: {error}"[:120])] += 1


TRANSPORT_ERRORS = (httpx.TransportError, ConnectionError, asyncio.IncompleteReadError)


@dataclass
class Target:
    url: str
    headers: dict
    model: str = "model.tar.gz"


async def timed_post(client: httpx.AsyncClient, tally: Tally, kind: str, url: str, **request) -> None:
    started = time.perf_counter()
    try:
        response = await client.post(url, **request)
    except TRANSPORT_ERRORS as error:
        tally.reset(kind, error)
        return
    tally.answered(kind, response.status_code, time.perf_counter() - started)


async def classify(client: httpx.AsyncClient, target: Target, tally: Tally, number: int, kind: str = "predict") -> None:
    await timed_post(client, tally, kind, target.url + "/predict", headers=target.headers,
                     json={"text": TEXTS[number % len(TEXTS)]})


async def complete(client: httpx.AsyncClient, target: Target, tally: Tally, number: int,
                   kind: str = "completion") -> None:
    body = {"model": target.model, "prompt": PROMPTS[number % len(PROMPTS)], "max_tokens": 8, "temperature": 0}
    await timed_post(client, tally, kind, target.url + "/v1/completions", headers=target.headers, json=body)


async def stream(client: httpx.AsyncClient, target: Target, tally: Tally, number: int, drop: bool) -> None:
    """A streamed completion read to its end, or (``drop``) abandoned after its first chunk."""
    body = {"model": target.model, "prompt": PROMPTS[number % len(PROMPTS)], "max_tokens": 12, "stream": True}
    kind = "stream_dropped" if drop else "stream"
    started = time.perf_counter()
    try:
        async with client.stream("POST", target.url + "/v1/completions", headers=target.headers, json=body) as response:
            async for line in response.aiter_lines():
                if drop and line.startswith("data: "):
                    tally.dropped_streams += 1
                    break  # leaving the block closes the connection mid-stream
                if line == "data: [DONE]":
                    break
            tally.answered(kind, response.status_code, None if drop else time.perf_counter() - started)
    except TRANSPORT_ERRORS as error:
        tally.reset(kind, error)


async def malformed(client: httpx.AsyncClient, target: Target, tally: Tally, number: int, limit: int) -> None:
    """Bad JSON, another content type, a body past ``--max-request-bytes``, an unknown field: each a 4xx."""
    headers = {**target.headers, "Content-Type": "application/json"}
    route = target.url + ("/predict" if number % 2 else "/v1/completions")
    cases = [("bad_json", {"content": b"{not json", "headers": headers}),
             ("wrong_type", {"content": b"text=hello", "headers": {**target.headers, "Content-Type": "text/plain"}}),
             ("oversized", {"content": b'{"text": "' + b"a" * (limit + 1) + b'"}', "headers": headers}),
             ("unknown_field", {"json": {"txet": "typo", "promt": "typo"}, "headers": target.headers})]
    kind, request = cases[number % len(cases)]
    await timed_post(client, tally, kind, route, **request)


async def unauthorized(client: httpx.AsyncClient, target: Target, tally: Tally, number: int) -> None:
    headers = {} if number % 2 else {"Authorization": "Bearer not-the-key"}
    await timed_post(client, tally, "no_key", target.url + "/predict", headers=headers, json={"text": "x"})


async def slow_sender(target: Target, tally: Tally, number: int, seconds: float = 2.0) -> None:
    """A client that sends its body a few bytes at a time over ``seconds``: answered as any other."""
    host, port = target.url.removeprefix("http://").split(":")
    body = json.dumps({"text": TEXTS[number % len(TEXTS)]}).encode()
    head = (f"POST /predict HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n")
    head += "".join(f"{name}: {value}\r\n" for name, value in target.headers.items()) + "\r\n"
    try:
        reader, writer = await asyncio.open_connection(host, int(port))
    except OSError as error:
        tally.reset("slow_sender", error)
        return
    try:
        writer.write(head.encode())
        pieces = [body[i:i + 8] for i in range(0, len(body), 8)]
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(seconds / len(pieces))
        status_line = await reader.readline()
        await reader.read()
        if not status_line:
            raise ConnectionError("closed without an answer")
        tally.answered("slow_sender", int(status_line.split()[1]))
    except TRANSPORT_ERRORS as error:
        tally.reset("slow_sender", error)
    finally:
        writer.close()


async def burst(client: httpx.AsyncClient, target: Target, tally: Tally, size: int, language_model: bool) -> None:
    """``size`` requests at once, past the server's queue: each is answered at once, 200 or 503."""
    send = complete if language_model else classify
    kind = "burst_completion" if language_model else "burst_predict"
    await asyncio.gather(*(send(client, target, tally, number, kind) for number in range(size)))
