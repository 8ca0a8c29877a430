"""The HTTP/1.1 protocol ``norma serve`` runs: uvicorn's httptools protocol with limits on what a client may hold.

uvicorn reads a request head without limit of size or time (httptools has no header-size limit; its keep-alive
timer is cancelled by the first byte of a request and only re-armed after a response) and accepts every connection.
This subclass adds, per connection:

* a **size cap on the request head**: the request line and every header together at most ``max_head_bytes`` (fed
  to the parser in slices of at most that, so a head never holds more than twice it even when pipelined requests
  share a read), one header at most ``max_header_bytes``; over either, 431;
* a **deadline for the head**: complete within ``header_timeout`` seconds of the connection (or of the first byte
  of a later request on a kept-alive connection), however slowly it trickles; else 408 (a connection that sent
  nothing is just closed);
* a **deadline for the body** (``body_timeout`` plus :data:`BODY_GRACE_SECONDS`, a backstop behind the edge
  middleware's own 408): a body that nobody reads (the route answered without it, e.g. 404) cannot hold the
  connection by trickling on either; 408 if no response was started, else the connection is closed after it;
* a **cap on chunked-body framing and trailer fields**: at most ``max_head_bytes`` besides the body's data (and a
  little per chunk), so trailers cannot grow without bound either (431);
* a **cap on open connections** per worker process: past ``max_connections`` a new connection gets 503 at once;
* every refusal answered as a JSON problem (the routes' shape), the connection then half-closed and drained for at
  most ``linger`` seconds (so the client reads the answer instead of a reset), then closed.

The request body's size and deadline, and authentication before the body, are the app's (the edge middleware), so
they hold under any server. :func:`http_protocol` gives the factory to pass as ``uvicorn.Config(http=...)``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Callable
from typing import Any

import httptools
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from norma.service._logging import ACCESS_LOGGER
from norma.service._middleware import API_CSP, SECURITY_HEADERS, problem_body
from norma.service._settings import ServiceSettings

__all__ = ["BODY_GRACE_SECONDS", "CHUNK_FRAMING_BYTES", "LINGER_SECONDS", "CappedHttpToolsProtocol", "http_protocol"]

BODY_GRACE_SECONDS = 1.0
"""The protocol's body deadline is ``body_timeout`` plus this, so the app's own 408 (logged with its request id)
comes first whenever the app is reading the body."""

CHUNK_FRAMING_BYTES = 64
"""Bytes of framing allowed per chunk of a chunked body (size line, extensions, CRLFs) on top of ``max_head_bytes``."""

LINGER_SECONDS = 2.0
"""After a refusal, how long the connection is drained (input discarded) before it is closed."""

_access = logging.getLogger(ACCESS_LOGGER)


class _Refused(Exception):
    """Raised in a parser callback to stop parsing (httptools turns it into HttpParserCallbackError)."""


class CappedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the head's size and deadline capped and the connections counted."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
        *,
        max_header_bytes: int = 8 * 1024,
        max_head_bytes: int = 32 * 1024,
        header_timeout: float = 10.0,
        body_timeout: float = 30.0,
        max_connections: int = 1000,
        linger: float = LINGER_SECONDS,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.max_header_bytes = max_header_bytes
        self.max_head_bytes = max_head_bytes
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.max_connections = max_connections
        self.linger = linger
        self._in_head = True  # bytes arriving now belong to a request head
        self._head_bytes = 0
        self._body_fed = 0  # bytes fed since the head ended, and how many of them were body data
        self._body_data = 0
        self._chunks = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._linger_timer: asyncio.TimerHandle | None = None
        self._refused = False
        self._refusal: tuple[int, str, dict[str, str]] | None = None

    # connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        full = len(self.connections) >= self.max_connections
        super().connection_made(transport)
        if full:
            self.connections.discard(self)  # a refused connection does not count against the others
            self._refuse(
                503,
                f"the server holds its limit of {self.max_connections:,} open connections",
                hint="retry in a moment",
            )
            return
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        self._cancel_body_timer()
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # draining after a refusal
        if not self._in_head:
            self._body_fed += len(data)
            self._feed(data)
            overhead = self._body_fed - self._body_data
            if not self._refused and not self._in_head and overhead > self._framing_allowance():
                self._refuse(
                    431,
                    f"the chunked body's framing and trailer fields are over the limit of "
                    f"{self.max_head_bytes:,} bytes",
                    field="trailers",
                )
            return
        if self._head_timer is None:
            self._arm_head_timer()
        room = self.max_head_bytes - self._head_bytes
        if len(data) <= room:
            self._head_bytes += len(data)
            self._feed(data)
            return
        self._head_bytes = self.max_head_bytes  # on_message_complete resets it if a (pipelined) request ends in there
        if room > 0:
            self._feed(data[:room])
        if self._refused:
            return
        if self._in_head and self._head_bytes >= self.max_head_bytes:  # the cap is reached inside one head
            self._refuse(
                431,
                f"the request line and headers are over the limit of {self.max_head_bytes:,} bytes",
                field="headers",
                hint="send fewer or shorter headers",
            )
            return
        self.data_received(data[room:])  # a head ended inside the allowed part: the rest is body or the next head

    def _feed(self, data: bytes) -> None:
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()
        except httptools.HttpParserError:
            if self._refusal is not None:
                status, detail, extra = self._refusal
                self._refuse(status, detail, **extra)
            else:
                self._refuse(400, "the request is not valid HTTP/1.1", hint="send a well-formed HTTP/1.1 request")

    def send_400_response(self, msg: str) -> None:
        self._refuse(400, "the request is not valid HTTP/1.1", hint="send a well-formed HTTP/1.1 request")

    # parser callbacks

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) + len(value) > self.max_header_bytes:
            shown = name.decode("latin-1").lower() if len(name) <= 64 else None
            detail = f"a header is over the limit of {self.max_header_bytes:,} bytes"
            if shown is not None:
                detail = f"the header {shown!r} is over the limit of {self.max_header_bytes:,} bytes"
            extra = {"field": f"headers.{shown}" if shown else "headers", "hint": "send shorter headers"}
            self._refusal = (431, detail, extra)
            raise _Refused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._cancel_head_timer()
        self._body_fed = self._body_data = self._chunks = 0
        self._cancel_body_timer()
        self._body_timer = self.loop.call_later(self.body_timeout + BODY_GRACE_SECONDS, self._body_timed_out)
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self._body_data += len(body)
        super().on_body(body)

    def on_chunk_header(self) -> None:
        self._chunks += 1

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._cancel_body_timer()
        self._in_head = True
        self._head_bytes = 0

    # timers and refusals

    def _framing_allowance(self) -> int:
        return self.max_head_bytes + CHUNK_FRAMING_BYTES * self._chunks

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _cancel_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_timed_out(self) -> None:
        self._body_timer = None
        if self._refused or self._in_head or self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is None or cycle.response_complete:  # answered already; the rest of the body is nobody's
            self._refused = True
            self.transport.close()
            return
        self._refuse(
            408,
            f"the request body did not arrive within {self.body_timeout:g} s",
            field="body",
            hint="send the whole body at once, right after the headers",
        )

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._refused or not self._in_head or self.transport.is_closing():
            return
        if self._head_bytes == 0 and self.cycle is None:  # connected and said nothing: nobody to answer
            self._refused = True
            self.transport.close()
            return
        self._refuse(
            408,
            f"the request line and headers did not arrive within {self.header_timeout:g} s",
            field="headers",
            hint="send the whole request head at once",
        )

    def _refuse(self, status: int, detail: str, **extra: str) -> None:
        """Answer ``status`` with a problem body (unless a response is already being written), then drain and close."""
        if self._refused:
            return
        self._refused = True
        self._cancel_head_timer()
        self._cancel_body_timer()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if cycle.response_started:  # never interleave: the response being written ends, then the connection
                cycle.keep_alive = False
                return
            cycle.disconnected = True  # the app's receive() now says http.disconnect and its sends are dropped
            cycle.message_event.set()
        request_id = uuid.uuid4().hex
        body = problem_body(status, detail, **extra)
        lines = [STATUS_LINE[status]]
        headers = [
            *self.server_state.default_headers,
            (b"content-type", b"application/problem+json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            (b"x-request-id", request_id.encode()),
            *((name.encode(), value.encode()) for name, value in SECURITY_HEADERS),
            (b"content-security-policy", API_CSP.encode()),
            (b"cache-control", b"no-store"),
            *([(b"retry-after", b"1")] if status == 503 else []),
        ]
        lines.extend(b"%s: %s\r\n" % (name, value) for name, value in headers)
        lines.append(b"\r\n")
        lines.append(body)
        self.transport.write(b"".join(lines))
        self._log(status, detail, request_id)
        self._drain_then_close()

    def _drain_then_close(self) -> None:
        transport = self.transport
        if self.linger <= 0 or not transport.can_write_eof():
            transport.close()
            return
        try:
            transport.write_eof()  # the answer, then FIN: the client reads it even while it is still sending
        except (OSError, RuntimeError):
            transport.close()
            return
        self.flow.resume_reading()  # read and discard what the client still sends, instead of resetting it
        self._linger_timer = self.loop.call_later(self.linger, transport.close)

    def _log(self, status: int, detail: str, request_id: str) -> None:
        client = self.client[0] if self.client else None
        _access.info(
            "- - %s",
            status,
            extra={"fields": {"request_id": request_id, "status": status, "reason": detail, "client": client}},
        )


def http_protocol(settings: ServiceSettings) -> Callable[..., asyncio.Protocol]:
    """The HTTP protocol factory for ``uvicorn.Config(http=...)`` with the limits of ``settings``.

    A :func:`functools.partial` of :class:`CappedHttpToolsProtocol` (picklable, so uvicorn's worker processes get it
    too). ``norma serve`` passes it; run ``create_app`` under your own uvicorn with
    ``uvicorn.run(app, http=http_protocol(settings))`` to get the same limits.
    """
    return functools.partial(
        CappedHttpToolsProtocol,
        max_header_bytes=settings.max_header_bytes,
        max_head_bytes=settings.max_head_bytes,
        header_timeout=settings.header_timeout,
        body_timeout=settings.body_timeout,
        max_connections=settings.max_connections,
    )
