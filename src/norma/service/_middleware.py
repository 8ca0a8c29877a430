"""The edge every request crosses first: request id, body size cap, security headers and the access log.

Plain ASGI (no per-request task or buffering beyond the capped body), so it costs microseconds.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import MutableMapping
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from norma.service._logging import ACCESS_LOGGER

__all__ = ["API_CSP", "EdgeMiddleware", "PAGE_CSP", "SECURITY_HEADERS"]

SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
    ("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=()"),
)
"""Sent with every response."""

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The playground's Content-Security-Policy: its own scripts and styles only, no inline code, no framing."""

API_CSP = "default-src 'none'; frame-ancestors 'none'"
"""API responses are data, never a document to render."""

_DOCS_PATHS = ("/docs", "/redoc")
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_log = logging.getLogger(ACCESS_LOGGER)
_errors_log = logging.getLogger("norma.service")


def _problem(status: int, detail: str, request_id: str, **extra: str) -> tuple[Message, Message]:
    title = {413: "request too large", 500: "internal error"}[status]
    problem = {"type": f"urn:norma:problem:{title.replace(' ', '-')}", "title": title, "status": status}
    body = json.dumps({**problem, "detail": detail, **extra}).encode()
    start: Message = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
            (b"x-request-id", request_id.encode()),
        ],
    }
    return start, {"type": "http.response.body", "body": body, "more_body": False}


class EdgeMiddleware:
    """Wraps the app: caps the body at ``max_body_bytes`` (413), adds headers, logs one line per request."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        incoming = headers.get("x-request-id", "")
        request_id = incoming if _REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        path: str = scope.get("path", "")
        outcome: dict[str, Any] = {"status": 0, "bytes_out": 0, "bytes_in": 0}

        async def send_wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                outcome["status"] = message["status"]
                message["headers"] = self._headers(path, list(message.get("headers", [])), request_id)
            elif message["type"] == "http.response.body":
                outcome["bytes_out"] += len(message.get("body", b""))
            await send(message)

        try:
            replay = await self._read_capped(headers, receive, outcome)
            if replay is None:
                start, body = _problem(
                    413,
                    f"the request body is over the limit of {self.max_body_bytes:,} bytes",
                    request_id,
                    field="body",
                    hint="send less per request (split a bulk import into batches)",
                )
                await send_wrapped(start)
                await send_wrapped(body)
                return
            try:
                await self.app(scope, replay, send_wrapped)
            except Exception:
                _errors_log.exception("unhandled error on %s %s", scope.get("method", ""), path)
                if outcome["status"] == 0:  # answer 500 ourselves, once; the traceback stays in the log
                    start, body = _problem(500, "internal error (logged on the server)", request_id)
                    await send_wrapped(start)
                    await send_wrapped(body)
        finally:
            self._log(scope, request_id, outcome, started)

    async def _read_capped(self, headers: dict[str, str], receive: Receive, outcome: dict[str, Any]) -> Receive | None:
        """A receive that replays the whole body, or None when the body is over the cap."""
        declared = headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > self.max_body_bytes:
                    return None
            except ValueError:
                return None
        elif "transfer-encoding" not in headers:
            return receive
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        outcome["bytes_in"] = size
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay

    @staticmethod
    def _headers(path: str, headers: list[tuple[bytes, bytes]], request_id: str) -> list[tuple[bytes, bytes]]:
        present = {k.lower() for k, _ in headers}
        extra: list[tuple[str, str]] = [("x-request-id", request_id), *SECURITY_HEADERS]
        if path == "/" or path.startswith("/static/"):
            extra.append(("content-security-policy", PAGE_CSP))
        elif not path.startswith(_DOCS_PATHS):
            extra.append(("content-security-policy", API_CSP))
            extra.append(("cache-control", "no-store"))
        for name, value in extra:
            if name.encode() not in present:
                headers.append((name.encode(), value.encode()))
        return headers

    @staticmethod
    def _log(scope: Scope, request_id: str, outcome: dict[str, Any], started: float) -> None:
        if not _log.isEnabledFor(logging.INFO):
            return
        state: MutableMapping[str, Any] = scope.get("state") or {}
        client = scope.get("client")
        _log.info(
            "%s %s %s",
            scope.get("method", ""),
            scope.get("path", ""),
            outcome["status"],
            extra={
                "fields": {
                    "request_id": request_id,
                    "method": scope.get("method", ""),
                    "path": scope.get("path", ""),
                    "status": outcome["status"],
                    "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                    "bytes_in": outcome["bytes_in"],
                    "bytes_out": outcome["bytes_out"],
                    "key_id": state.get("key_id"),
                    "client": client[0] if client else None,
                }
            },
        )
