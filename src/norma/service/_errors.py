"""One table from errors to HTTP statuses, and every error answered as a JSON problem (RFC 9457) naming the field.

The table (:data:`ERROR_STATUS`) is looked up along the exception's MRO, so a subclass gets its parent's status
unless it has its own row. Every error a route raises on purpose is a :class:`~norma.errors.NormaError`, the
service's own two included (:class:`UnauthorizedError`, 401; :class:`RequestTimeoutError`, 503). Request bodies that
do not fit a route's schema are FastAPI's 422; unknown routes and methods are the HTTP layer's own 404 / 405.
Anything else is a bug: the edge middleware answers 500 with no detail (the traceback goes to the log, never to the
client).

Error bodies name fields and ids, never the server's paths: a 5xx for a store, backend or configuration failure says
what is unavailable in general words (the log line keeps the message, the database and the folder), and any path
of the settings (the store, the audit documents) that a 4xx message happens to hold is replaced by
``<server path>``.
"""

from __future__ import annotations

import functools
import json
import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pydantic
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from norma.errors import (
    AuthenticationError,
    BackendError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    LimitExceededError,
    MissingDependencyError,
    NormaError,
    NotFoundError,
    RateLimitedError,
    StoreError,
    StoreUnavailableError,
)

__all__ = [
    "ERROR_STATUS",
    "PROBLEM_MEDIA_TYPE",
    "REDACTED",
    "RequestTimeoutError",
    "UnauthorizedError",
    "install_error_handlers",
    "norma_error_response",
    "problem_response",
    "redact",
    "server_paths",
    "status_for",
]

PROBLEM_MEDIA_TYPE = "application/problem+json"


class UnauthorizedError(AuthenticationError):
    """No API key, or one that is unknown, malformed or revoked (401); the hint says how to send one."""

    def __init__(self, message: str = "a valid API key is required") -> None:
        super().__init__(
            message,
            hint="send `Authorization: Bearer <key>` (create one with `norma keys create --tenant T`)",
        )


class RequestTimeoutError(NormaError):
    """The request ran past ``request_timeout`` (503); ``seconds`` is that limit."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the request took longer than {seconds:g} s", hint="retry later, or send less work per request"
        )
        self.seconds = seconds


ERROR_STATUS: Mapping[type[BaseException], int] = {
    LimitExceededError: 413,
    InvalidInputError: 400,
    AuthenticationError: 401,
    ForbiddenError: 403,
    NotFoundError: 404,
    ConflictError: 409,
    RateLimitedError: 429,
    StoreError: 503,
    BackendError: 503,
    MissingDependencyError: 503,
    ConfigError: 503,
    RequestTimeoutError: 503,
    NormaError: 500,
}
"""Every error a route can raise on purpose, and the status it is answered with."""

_TITLES = {
    400: "invalid input",
    401: "unauthorized",
    403: "forbidden",
    404: "not found",
    405: "method not allowed",
    409: "conflict",
    413: "request too large",
    422: "invalid request body",
    429: "too many requests",
    500: "internal error",
    503: "service unavailable",
}

_log = logging.getLogger("norma.service")

_IN_DOUBT = (
    "the rule store went away while it committed the write and did not come back in time to say whether it did: the"
    " write may be stored",
    "read it back, or repeat the request, once the store answers again (after the seconds in Retry-After)",
)
"""What a 503 says for a write that may be stored (``StoreUnavailableError.in_doubt``)."""

_PUBLIC_DETAIL: Mapping[type[NormaError], tuple[str, str]] = {
    StoreUnavailableError: (
        "the rule store is unreachable; nothing was written",
        "retry after the seconds in Retry-After; matches keep being answered from memory for a while",
    ),
    StoreError: ("the rule store is not available", "retry later; the server log has the details"),
    BackendError: ("a backend this request needs failed", "retry later; the server log has the details"),
    MissingDependencyError: (
        "the server lacks a package this request needs",
        "ask the operator; the server log has the details",
    ),
    ConfigError: ("the server is not configured for this request", "ask the operator; the server log has the details"),
}
"""What a 5xx says instead of the error's own message (which may name a database, a host or a folder)."""
REDACTED = "<server path>"
"""What a server path in an error message is replaced with."""


class _ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:  # text that is not valid Unicode: escaped, never a 500 while answering an error
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def server_paths(settings: Any) -> tuple[str, ...]:
    """The paths of ``settings`` (store file or URL, audit documents folder) as a message could spell them, longest
    first; what :func:`redact` removes from error bodies."""
    try:
        return _server_paths(settings)
    except TypeError:  # not hashable: not a ServiceSettings
        return ()


@functools.lru_cache(maxsize=16)
def _server_paths(settings: Any) -> tuple[str, ...]:
    found: set[str] = set()
    db_url = getattr(settings, "db_url", None)
    if isinstance(db_url, str) and db_url:
        found.add(db_url)
        if db_url.startswith("sqlite:///"):
            found.add(db_url.removeprefix("sqlite:///"))
    for value in (getattr(settings, "audit_docs", None),):
        if value is not None:
            found.add(str(value))
    for text in list(found):
        if "://" not in text:
            path = Path(text)
            found.update({str(path.resolve()), str(path.resolve().parent), str(path.parent)})
    return tuple(sorted((p for p in found if len(p) > 1 and p != "."), key=len, reverse=True))


def redact(text: str, paths: Sequence[str]) -> str:
    """``text`` with every one of ``paths`` replaced by :data:`REDACTED`."""
    for path in paths:
        if path in text:
            text = text.replace(path, REDACTED)
    return text


def status_for(error: BaseException) -> int:
    """The HTTP status of ``error`` per :data:`ERROR_STATUS` (500 for anything not in it)."""
    for cls in type(error).__mro__:
        status = ERROR_STATUS.get(cls)
        if status is not None:
            return status
    return 500


def _slug(status: int) -> str:
    return _TITLES.get(status, "error").replace(" ", "-")


def problem_response(
    status: int,
    detail: str,
    *,
    field: str | None = None,
    errors: Sequence[Mapping[str, Any]] = (),
    hint: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """A ``application/problem+json`` response: type, title, status, detail, the field at fault and every error."""
    body: dict[str, Any] = {
        "type": f"urn:norma:problem:{_slug(status)}",
        "title": _TITLES.get(status, "error"),
        "status": status,
        "detail": detail,
    }
    if field is not None:
        body["field"] = field
    if errors:
        body["errors"] = [dict(e) for e in errors]
    if hint:
        body["hint"] = hint
    return _ProblemResponse(body, status_code=status, headers=dict(headers or {}), media_type=PROBLEM_MEDIA_TYPE)


def _field_path(loc: Sequence[int | str]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _pydantic_errors(errors: Sequence[Mapping[str, Any]], prefix: Sequence[int | str] = ()) -> list[dict[str, str]]:
    return [
        {
            "field": _field_path([*prefix, *e.get("loc", ())]),
            "message": str(e.get("msg", "invalid")).removeprefix("Value error, "),
        }
        for e in errors
    ]


def norma_error_response(error: NormaError, *, paths: Sequence[str] = ()) -> JSONResponse:
    """The problem response for one of norma's own errors (status from :data:`ERROR_STATUS`).

    A 5xx says what failed in general words (:data:`_PUBLIC_DETAIL`; the log keeps the message); ``paths`` (the
    server's, :func:`server_paths`) are removed from what a 4xx says.
    """
    status = status_for(error)
    headers: dict[str, str] = {}
    if isinstance(error, RateLimitedError):
        headers["Retry-After"] = str(max(1, math.ceil(error.retry_after)))
    elif status == 503:  # every 503 says when to come back (a store down, a request over its time)
        headers["Retry-After"] = str(max(1, math.ceil(getattr(error, "retry_after", 1.0))))
    if isinstance(error, AuthenticationError):
        headers["WWW-Authenticate"] = 'Bearer realm="norma"'
    if status >= 500 and not isinstance(error, RequestTimeoutError):  # a timeout is load, not a fault: see access log
        in_doubt = isinstance(error, StoreUnavailableError) and error.in_doubt
        if in_doubt:
            _log.warning("a write answered 503 may be stored: %s", error)
        elif not isinstance(error, StoreUnavailableError):  # logged when the store's state changes, with counts
            _log.warning("request failed: %s: %s", type(error).__name__, error)
        public, advice = (
            _IN_DOUBT
            if in_doubt
            else next(
                (text for cls in type(error).__mro__ if (text := _PUBLIC_DETAIL.get(cls)) is not None),
                ("internal error (logged on the server)", "retry later; the server log has the details"),
            )
        )
        return problem_response(status, public, hint=advice, headers=headers)
    errors: list[dict[str, Any]] = []
    problems = getattr(error, "problems", None)
    if isinstance(problems, list):
        for problem in problems:
            index = getattr(problem, "index", None)
            name = str(getattr(problem, "field", ""))
            where = name if index is None else f"rules[{index}].{name}"
            errors.append({"field": where, "message": redact(str(getattr(problem, "message", problem)), paths)})
    field = error.location or (errors[0]["field"] if errors else None)
    detail = redact(error.message, paths)
    hint = redact(error.hint, paths) if error.hint else None
    if detail != error.message or hint != error.hint:
        _log.info("a server path was removed from an error body: %s", error)
    return problem_response(status, detail, field=field, errors=errors, hint=hint, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error the app can meet with a problem response."""

    async def on_norma(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, NormaError)
        state = getattr(request.app.state, "norma", None)
        return norma_error_response(exc, paths=server_paths(getattr(state, "settings", None)))

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = _pydantic_errors(exc.errors())
        first = errors[0] if errors else {"field": "body", "message": "invalid"}
        detail = f"{first['field']}: {first['message']}"
        return problem_response(422, detail, field=first["field"], errors=errors)

    async def on_model(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, pydantic.ValidationError)
        errors = _pydantic_errors(exc.errors(include_url=False))
        first = errors[0] if errors else {"field": "body", "message": "invalid"}
        return problem_response(400, f"{first['field']}: {first['message']}", field=first["field"], errors=errors)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        detail = exc.detail if isinstance(exc.detail, str) else _TITLES.get(exc.status_code, "error")
        return problem_response(exc.status_code, detail, headers=exc.headers)

    app.add_exception_handler(NormaError, on_norma)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(pydantic.ValidationError, on_model)
    app.add_exception_handler(StarletteHTTPException, on_http)
