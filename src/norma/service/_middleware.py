"""The edge every request crosses first: request id, authentication from the request head, body size cap and
deadline, security headers and the access log.

Order, for a route that needs a key: the key is checked from the headers alone (401 / 429 without reading a byte of
the body, and ``Connection: close`` when a body was announced, so it is never read), then the body is read whole
under ``max_body_bytes`` (413) and ``body_timeout`` (408, then the connection is closed), then the route runs.
Plain ASGI (no per-request task or buffering beyond the capped body), so it costs microseconds.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from norma._trace import Traced, request_span
from norma.errors import NormaError
from norma.service._errors import norma_error_response
from norma.service._logging import ACCESS_LOGGER
from norma.service._outage import STALE_HEADER, http_date
from norma.service._state import PRINCIPAL_STATE, STALE_STATE

if TYPE_CHECKING:
    from norma.service._state import ServiceState

__all__ = [
    "API_CSP",
    "DOCS_CSP",
    "EdgeMiddleware",
    "PAGE_CSP",
    "PROBLEM_TITLES",
    "SECURITY_HEADERS",
    "problem_body",
]

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

DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""The API documentation pages' (``/docs``, ``/redoc``) Content-Security-Policy: scripts, styles, images and calls
from this server only, so the pages never reach another host (Swagger UI and ReDoc set inline styles)."""

_DOCS_PATHS = ("/docs", "/redoc")
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_log = logging.getLogger(ACCESS_LOGGER)
_errors_log = logging.getLogger("norma.service")


PROBLEM_TITLES: dict[int, str] = {
    400: "bad request",
    408: "request timeout",
    413: "request too large",
    431: "request header fields too large",
    500: "internal error",
    503: "service unavailable",
}
"""Titles of the problems answered below the routes (here and by the HTTP protocol of ``norma serve``)."""


class _ClientGone(Exception):
    """The client closed the connection before its body was in (nobody is left to answer)."""


def problem_body(status: int, detail: str, **extra: str) -> bytes:
    """A problem (RFC 9457) as JSON bytes, in the shape of the routes' problems: type, title, status, detail, …"""
    title = PROBLEM_TITLES[status]
    problem = {"type": f"urn:norma:problem:{title.replace(' ', '-')}", "title": title, "status": status}
    return json.dumps({**problem, "detail": detail, **extra}).encode()


def _problem(
    status: int, detail: str, request_id: str, *, close: bool = False, **extra: str
) -> tuple[Message, Message]:
    body = problem_body(status, detail, **extra)
    headers = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-request-id", request_id.encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    start: Message = {"type": "http.response.start", "status": status, "headers": headers}
    return start, {"type": "http.response.body", "body": body, "more_body": False}


async def _send_problem(
    send: Send, status: int, detail: str, request_id: str, *, close: bool = False, **extra: str
) -> None:
    """Answer with a problem body (see :func:`_problem`)."""
    start, body = _problem(status, detail, request_id, close=close, **extra)
    await send(start)
    await send(body)


def _keyed_patterns(routes: Sequence[BaseRoute]) -> dict[str, re.Pattern[str]]:
    """One regular expression per method matching the paths of ``routes`` (the routes' own path patterns, joined)."""
    by_method: dict[str, list[str]] = {}
    for route in routes:
        regex: re.Pattern[str] | None = getattr(route, "path_regex", None)
        methods: set[str] = getattr(route, "methods", None) or set()
        if regex is None:
            raise TypeError(f"{route!r} has no path pattern")
        unnamed = re.sub(r"\(\?P<\w+>", "(?:", regex.pattern)
        for method in methods:
            by_method.setdefault(method, []).append(f"(?:{unnamed})")
    return {method: re.compile("|".join(parts)) for method, parts in by_method.items()}


def _annotate_span(traced: Traced, scope: Scope, status: int) -> None:
    """Record the tenant on the request's span; when norma made the span (not FastAPI), also name it after the
    route template (``POST /v1/tenants/{tenant}/match``; the method alone when no route took the request) and record
    the route and the status (5xx: an error). Called when the answer starts (or, without one, at the end)."""
    if not traced.recording:
        return
    principal = (scope.get("state") or {}).get(PRINCIPAL_STATE)
    tenant = (scope.get("path_params") or {}).get("tenant") or getattr(principal, "tenant_id", None)
    traced.set({"norma.tenant": tenant})
    if traced.upstream:
        return
    template: str | None = getattr(scope.get("route"), "path", None)
    if template is not None:
        traced.rename(f"{scope.get('method', '')} {template}")
    traced.set({"http.route": template, "http.response.status_code": status})
    if status >= 500:
        traced.fail(str(status))


class EdgeMiddleware:
    """Wraps the app: authenticates requests to ``keyed_routes`` from their headers (through ``state``), caps the
    body at ``max_body_bytes`` (413) and its arrival at ``body_timeout`` seconds (408), adds headers, logs one line
    per request."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        body_timeout: float = 30.0,
        state: ServiceState | None = None,
        keyed_routes: Sequence[BaseRoute] = (),
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.state = state
        self.keyed_routes = tuple(keyed_routes)
        self._keyed = _keyed_patterns(self.keyed_routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        incoming = headers.get("x-request-id", "")
        request_id = incoming if _REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        path: str = scope.get("path", "")
        outcome: dict[str, int] = {"status": 0, "bytes_out": 0, "bytes_in": 0}
        method: str = scope.get("method", "")
        attributes = {"http.request.method": method, "url.path": path, "norma.request_id": request_id}
        traced = request_span(method or "HTTP", headers, attributes)  # the caller's traceparent continued

        async def send_wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                outcome["status"] = message["status"]
                _annotate_span(traced, scope, message["status"])  # now: FastAPI ends its span with the response
                message["headers"] = self._headers(path, list(message.get("headers", [])), request_id)
                stale = (scope.get("state") or {}).get(STALE_STATE)
                if stale is not None and message["status"] < 400:  # answered from memory: say since when
                    message["headers"].append((STALE_HEADER.lower().encode(), http_date(stale).encode()))
            elif message["type"] == "http.response.body":
                outcome["bytes_out"] += len(message.get("body", b""))
            await send(message)

        with traced:
            try:
                await self._handle(scope, receive, send_wrapped, headers, request_id, outcome)
            except Exception:
                _errors_log.exception("unhandled error on %s %s", method, path)
                if outcome["status"] == 0:  # answer 500 ourselves, once; the traceback stays in the log
                    await _send_problem(send_wrapped, 500, "internal error (logged on the server)", request_id)
            finally:
                if outcome["status"] in (0, 499):  # no answer was sent (the client left)
                    _annotate_span(traced, scope, outcome["status"])
                self._log(scope, request_id, outcome, started, traced.ids())

    async def _handle(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        request_id: str,
        outcome: dict[str, int],
    ) -> None:
        pending = headers.get("content-length", "0") != "0" or "transfer-encoding" in headers
        if self.state is not None and self._needs_key(scope):
            client = scope.get("client")
            scope_state = scope.setdefault("state", {})
            try:
                principal = await self.state.authenticate_head(headers, client[0] if client else None)
                scope_state["key_id"] = principal.key_id
                self.state.limiter.check(principal.key_id)
            except NormaError as exc:  # 401 / 429 (or 503: the store is down), the body left unread
                response = norma_error_response(exc)
                if pending:
                    response.headers["connection"] = "close"
                await response(scope, receive, send)
                return
            scope_state[PRINCIPAL_STATE] = principal
            if principal.stale_since is not None:
                scope_state[STALE_STATE] = principal.stale_since
        try:
            if pending:
                with anyio.fail_after(self.body_timeout):
                    replay = await self._read_capped(headers, receive, outcome)
            else:
                replay = receive
        except _ClientGone:
            outcome["status"] = 499  # logged as nginx does: the client closed the request before its body was in
            return
        except TimeoutError:
            await _send_problem(
                send,
                408,
                f"the request body did not arrive within {self.body_timeout:g} s",
                request_id,
                close=True,
                field="body",
                hint="send the whole body at once, right after the headers",
            )
            return
        if replay is None:
            await _send_problem(
                send,
                413,
                f"the request body is over the limit of {self.max_body_bytes:,} bytes",
                request_id,
                close=pending,
                field="body",
                hint="send less per request (split a bulk import into batches)",
            )
            return
        await self.app(scope, replay, send)

    async def _read_capped(self, headers: dict[str, str], receive: Receive, outcome: dict[str, int]) -> Receive | None:
        """A receive that replays the whole body, or None when the body is over the cap; _ClientGone when the client
        disconnects first."""
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
                raise _ClientGone
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

    def _needs_key(self, scope: Scope) -> bool:
        """Whether the request goes to a route that needs an API key (method and path both match)."""
        pattern = self._keyed.get(scope.get("method", ""))
        if pattern is None:
            return False
        path: str = scope.get("path", "")
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return pattern.match(path) is not None

    @staticmethod
    def _headers(path: str, headers: list[tuple[bytes, bytes]], request_id: str) -> list[tuple[bytes, bytes]]:
        present = {k.lower() for k, _ in headers}
        extra: list[tuple[str, str]] = [("x-request-id", request_id), *SECURITY_HEADERS]
        if path == "/" or path.startswith("/static/"):
            extra.append(("content-security-policy", PAGE_CSP))
        elif path.startswith(_DOCS_PATHS):
            extra.append(("content-security-policy", DOCS_CSP))
        else:
            extra.append(("content-security-policy", API_CSP))
            extra.append(("cache-control", "no-store"))
        for name, value in extra:
            if name.encode() not in present:
                headers.append((name.encode(), value.encode()))
        return headers

    @staticmethod
    def _log(
        scope: Scope, request_id: str, outcome: dict[str, int], started: float, trace_ids: tuple[str, str] | None
    ) -> None:
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
                    **({"stale": True} if state.get(STALE_STATE) is not None else {}),
                    "client": client[0] if client else None,
                    **({"trace_id": trace_ids[0], "span_id": trace_ids[1]} if trace_ids is not None else {}),
                }
            },
        )
