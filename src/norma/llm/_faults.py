"""Every way a chat model's server can fail one request, named once: the judge's retry plan and the guarded
endpoint read the same :class:`Fault`.

A fault is one of:

* ``status``: the server answered an error status (its own message and ``Retry-After`` kept);
* ``unreachable``: no connection (refused, reset while connecting, DNS, connect timeout);
* ``dropped``: the connection failed after it was made;
* ``timeout``: no answer within the read timeout (a whole call, for the async client);
* ``busy``: no pooled connection was free in time;
* ``garbage``: an answer that is not a chat reply (not JSON, no choices, no text; a stream that breaks its format).

Where the fault is passed on as an HTTP answer (the guarded endpoint: a gateway), :attr:`LLMBackendError.gateway_status`
is 504 for ``timeout`` and ``busy`` and 502 for the others, and :attr:`LLMBackendError.gateway_retry_after` the
``Retry-After``: the server's own when it sent one, else 5 s for a timeout, 1 s for a fault that may pass (429, 5xx,
no connection, garbage), none for another 4xx (the same request fails again).

An API key never appears in a fault: text from the server has it replaced by :data:`KEY_MARK`.
"""

from __future__ import annotations

import email.utils
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import httpx

from norma.errors import BackendError

__all__ = ["KEY_MARK", "Fault", "FaultKind", "LLMBackendError", "retry_after_of"]

KEY_MARK = "<api key>"
"""What replaces the API key in text a server sent back."""
_MAX_SAID = 300

FaultKind = Literal["status", "unreachable", "dropped", "timeout", "busy", "garbage"]


@dataclass(frozen=True)
class Fault:
    """Why one request failed."""

    kind: FaultKind
    status: int | None = None
    """The server's HTTP status (``status`` faults, and ``garbage`` in a 2xx answer)."""
    said: str = ""
    """The server's own error message (the key replaced, blanks collapsed, at most a few hundred characters), or what
    was wrong with its answer (``garbage``), or the transport error's type (``unreachable``, ``dropped``)."""
    retry_after: float | None = None
    """The server's ``Retry-After`` in seconds (None: it sent none)."""
    seconds: float | None = None
    """The timeout that ran out (``timeout``)."""

    @classmethod
    def of_status(cls, response: httpx.Response, body: bytes, key: str | None) -> Fault:
        """The fault of an error status, its message read from ``body`` (OpenAI's ``{"error": {"message"}}``,
        ``detail``, ``message`` or the text)."""
        try:
            text = _error_text(json.loads(body))
        except (ValueError, UnicodeDecodeError):
            text = body.decode("utf-8", "replace")
        return cls("status", response.status_code, scrub(text, key), retry_after_of(response.headers))

    @classmethod
    def of_transport(cls, error: httpx.TransportError, timeout: float) -> Fault:
        """The fault of a transport error (``timeout``: the read timeout, named in the gateway's message)."""
        if isinstance(error, httpx.PoolTimeout):
            return cls("busy")
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
            return cls("unreachable", said=type(error).__name__)
        if isinstance(error, httpx.TimeoutException):
            return cls("timeout", seconds=timeout)
        return cls("dropped", said=type(error).__name__)

    @classmethod
    def garbage(cls, what: str, status: int | None = None) -> Fault:
        """An answer that is not a chat reply: ``what`` says how, after "the upstream" (``answered without
        choices``, ``'s answer is not JSON``)."""
        return cls("garbage", status, what)

    @property
    def reason(self) -> str:
        """The fault in a few words, as the retry plan logs it and lists it when it gives up."""
        if self.kind == "status":
            return f"HTTP {self.status}" + (f" ({self.said[:200]})" if self.said else "")
        if self.kind == "unreachable":
            return "connection timed out" if self.said == "ConnectTimeout" else "connection failed"
        if self.kind == "timeout":
            return "no reply within the read timeout"
        if self.kind == "busy":
            return "no pooled connection was free in time"
        if self.kind == "dropped":
            return f"connection dropped ({self.said})"
        return f"an answer that is not a chat reply: the server{_joined(self.said)}"

    @property
    def gateway_detail(self) -> str:
        """The fault as the guarded endpoint tells its client."""
        if self.kind == "status":
            return f"the upstream answered {self.status}" + (f": {self.said}" if self.said else "")
        if self.kind == "unreachable":
            return f"the upstream is unreachable ({self.said})"
        if self.kind == "timeout":
            return f"the upstream did not answer within {self.seconds:g} s"
        if self.kind == "busy":
            return "no connection to the upstream was free in time"
        if self.kind == "dropped":
            return f"the connection to the upstream failed ({self.said})"
        return f"the upstream{_joined(self.said)}"


def _joined(what: str) -> str:
    return what if what.startswith("'") else f" {what}"


class LLMBackendError(BackendError):
    """A chat model's server that failed or answered nonsense, after every retry and fallback model.

    ``endpoint`` is the URL (without credentials), ``status`` the last HTTP status (None when no response came
    back), ``attempts`` the number of requests sent, ``fault`` the last request's :class:`Fault`.
    """

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        status: int | None,
        attempts: int,
        hint: str | None = None,
        fault: Fault | None = None,
    ):
        super().__init__(message, source=endpoint, hint=hint)
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts
        self.fault = fault

    @property
    def gateway_status(self) -> int:
        """What a gateway answers for it: 504 when the server was too slow or no connection was free, else 502."""
        return 504 if self.fault is not None and self.fault.kind in ("timeout", "busy") else 502

    @property
    def gateway_retry_after(self) -> float | None:
        """The ``Retry-After`` a gateway answers (None: none, retrying the same request will not help)."""
        fault = self.fault
        if fault is None:
            return 1.0
        if fault.retry_after is not None:
            return fault.retry_after
        if fault.kind in ("timeout", "busy"):
            return 5.0
        if fault.kind == "status" and fault.status is not None and fault.status != 429 and fault.status < 500:
            return None
        return 1.0

    @property
    def gateway_detail(self) -> str:
        """The fault as a gateway tells its client (this error's message when there is no fault)."""
        return self.fault.gateway_detail if self.fault is not None else self.message


def scrub(text: str, key: str | None) -> str:
    """``text`` fit to pass on: the key replaced by :data:`KEY_MARK`, blanks collapsed, at most a few hundred
    characters."""
    if key:
        text = text.replace(key, KEY_MARK)
    text = " ".join(text.split())
    return text if len(text) <= _MAX_SAID else text[: _MAX_SAID - 1] + "…"


def _error_text(data: Any) -> str:
    if isinstance(data, Mapping):
        error = data.get("error", data.get("detail", data.get("message", "")))
        if isinstance(error, Mapping):
            error = error.get("message", "")
        return str(error or "")
    return ""


def retry_after_of(headers: httpx.Headers) -> float | None:
    """``Retry-After`` in seconds (a number, or an HTTP date), None when absent or unreadable (not a finite number:
    ``inf``, ``nan``, ``1e400``)."""
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None
