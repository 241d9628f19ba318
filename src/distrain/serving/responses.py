"""The JSON answers every route gives: a body, or an error ``{"error": {"type", "message", ...}}`` with its status.

Its own module so that the classifier routes (:mod:`.app`) and the OpenAI routes (:mod:`.openai_api`)
share them without importing each other.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response


class ApiError(Exception):
    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.headers, self.extra = status, kind, message, headers or {}, extra

    def response(self) -> Response:
        return json_response({"error": {"type": self.kind, "message": self.message, **self.extra}}, self.status, self.headers)


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    # json.dumps as `distrain predict` writes its lines, so an answer is byte for byte that line
    return Response(json.dumps(body), status_code=status, headers=headers, media_type="application/json")
