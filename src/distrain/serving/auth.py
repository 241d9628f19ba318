"""``distrain serve --api-key KEY``: every request but ``/health`` and the demo page's static shell must carry
``Authorization: Bearer KEY`` (what the OpenAI client sends for its ``api_key``), or it gets 401 before any
route runs: no body is read, nothing is queued, the model never sees it.

An ASGI middleware rather than a check in each route, so a route added later cannot forget it. The demo page
(``/`` and ``/static/*``) is the same HTML and JavaScript for every server and says nothing about the model; it
asks for the key and sends it with its own requests, which a browser cannot do for a page it navigates to.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Callable

#: paths answered without the key: liveness for orchestrators, and the demo page's static files
OPEN_PATHS = frozenset({"/health", "/"})
OPEN_PREFIXES = ("/static/",)


def key_problem(key: str) -> str | None:
    """Why ``key`` cannot be an API key (an HTTP header carries visible ASCII only), or None."""
    if not key:
        return "must not be empty"
    if not all(33 <= ord(character) <= 126 for character in key):
        return "must be printable ASCII without spaces (it travels in an HTTP header)"
    return None


def _digest(value: bytes) -> bytes:
    return hashlib.sha256(value).digest()


def presented_key_matches(authorization: bytes, expected_digest: bytes) -> bool:
    """Whether an ``Authorization`` header value is ``Bearer KEY``. Both sides are hashed first and compared
    with :func:`hmac.compare_digest`, so the time taken says nothing about how much of a guess was right,
    nor about the key's length."""
    scheme, _, token = authorization.strip().partition(b" ")
    matches = hmac.compare_digest(_digest(token.strip()), expected_digest)
    return matches and scheme.lower() == b"bearer"


class RequireApiKey:
    """ASGI middleware: requests to closed paths without the right bearer token get 401 JSON at once."""

    def __init__(self, app, key: str, on_refused: Callable[[], None] = lambda: None) -> None:
        self.app = app
        self.expected = _digest(key.encode("ascii"))
        self.on_refused = on_refused

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or self.is_open(scope["path"]):
            return await self.app(scope, receive, send)
        authorization = b""
        for name, value in scope["headers"]:
            if name == b"authorization":
                authorization = value
                break
        if presented_key_matches(authorization, self.expected):
            return await self.app(scope, receive, send)
        self.on_refused()
        await self.refuse(send, "a key is missing" if not authorization else "the key is wrong")

    @staticmethod
    def is_open(path: str) -> bool:
        return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)

    @staticmethod
    async def refuse(send, why: str) -> None:
        message = f"{why}: this server needs 'Authorization: Bearer KEY' (the key given to distrain serve --api-key)"
        body = json.dumps({"error": {"type": "unauthorized", "message": message}}).encode()
        # the body is never read: the connection closes, so an unread upload cannot be taken for the next request
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"www-authenticate", b'Bearer realm="distrain"'), (b"connection", b"close")]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})
