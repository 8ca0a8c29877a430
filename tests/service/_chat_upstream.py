"""A scripted OpenAI-compatible upstream on a loopback port, for the guarded endpoint's tests and benchmark.

Plain HTTP/1.1 over asyncio streams in a thread of its own, so it sees what a real model server sees: each
connection (``open`` now, ``peak`` at most, ``connections`` in all), each request (``requests``: path, lower-cased
headers, JSON body), and a client that closes its connection while it waits for an answer (``abandoned``).

Each request takes the next scripted step (FIFO), else the default (``reply(default)`` after ``latency`` s):

* ``reply(text)``: a chat completion; a request with ``"stream": true`` gets it as server-sent events, one event
  per word (``chunk_delay`` s apart), then ``data: [DONE]``; ``cut=True`` closes the connection after the first
  event;
* ``status(code, message)``: an OpenAI error body with that status (``retry_after``: the header);
* ``raw(body)``: those bytes with status 200 (garbage);
* ``pieces(*chunks)``: an event stream written in those pieces, apart in time (lines cut anywhere).

``GET .../models`` answers :data:`MODELS`, unless the next step is a scripted fault (``status``, ``raw``).

Keep-alive connections are kept; chunked transfer encoding for streams.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MODELS", "ChatUpstream", "Seen"]

MODELS = {"object": "list", "data": [{"id": "scripted-model", "object": "model", "created": 1, "owned_by": "tests"}]}
"""What ``GET /v1/models`` answers (a scripted fault instead, when one is next)."""


@dataclass(frozen=True)
class Seen:
    """One request the upstream received."""

    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []


@dataclass
class _Step:
    kind: str
    text: str = ""
    delay: float = 0.0
    status: int = 200
    raw: bytes = b""
    content_type: str = "application/json"
    retry_after: str | None = None
    cut: bool = False
    pieces: tuple[bytes, ...] = ()
    gap: float = 0.0


class _Gone(Exception):
    """The client closed its connection while the upstream was answering."""


@dataclass
class ChatUpstream:
    """See the module docstring; ``with ChatUpstream(latency=0.05) as up: up.url`` (base URL, ``/v1``)."""

    latency: float = 0.0
    default: str = "Our refund policy applies: fill in form REF-1234."
    chunk_delay: float = 0.0
    record: bool = True
    requests: list[Seen] = field(default_factory=list)
    open: int = 0
    connections: int = 0
    abandoned: int = 0
    peak: int = 0
    _steps: deque[_Step] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _loop: asyncio.AbstractEventLoop | None = None
    _server: asyncio.Server | None = None
    _thread: threading.Thread | None = None
    port: int = 0

    # --- the script ------------------------------------------------------------------------------------------------

    def reply(self, text: str, *, times: int = 1, delay: float | None = None, cut: bool = False) -> ChatUpstream:
        return self._push(_Step("reply", text=text, delay=self.latency if delay is None else delay, cut=cut), times)

    def status(
        self, code: int, message: str = "bad request", *, retry_after: str | None = None, times: int = 1
    ) -> ChatUpstream:
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode()
        return self._push(_Step("raw", status=code, raw=body, retry_after=retry_after), times)

    def empty_stream(self) -> ChatUpstream:
        """A stream of no event: ``data: [DONE]`` at once."""
        body = b"data: [DONE]\n\n"
        return self._push(_Step("raw", raw=body, content_type="text/event-stream"), 1)

    def pieces(self, *pieces: bytes, gap: float = 0.05) -> ChatUpstream:
        """An event stream written as these bytes, one write ``gap`` s apart (lines and characters may be cut
        anywhere between two pieces)."""
        return self._push(_Step("pieces", pieces=pieces, gap=gap), 1)

    def raw(self, body: bytes, *, content_type: str = "application/json") -> ChatUpstream:
        return self._push(_Step("raw", raw=body, content_type=content_type), 1)

    def _push(self, step: _Step, times: int) -> ChatUpstream:
        with self._lock:
            self._steps.extend([step] * times)
        return self

    def _next(self) -> _Step:
        with self._lock:
            if self._steps:
                return self._steps.popleft()
        return _Step("reply", text=self.default, delay=self.latency)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- the server ------------------------------------------------------------------------------------------------

    def __enter__(self) -> ChatUpstream:
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(asyncio.start_server(self._connection, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
            started.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        loop, server = self._loop, self._server
        if loop is None or server is None:
            return

        async def stop() -> None:
            server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def wait_for(self, predicate: Any, timeout: float = 5.0) -> bool:
        """Whether ``predicate()`` became true within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.01)
        return bool(predicate())

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        self.connections += 1
        self.peak = max(self.peak, self.open)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                raw = await reader.readexactly(int(headers.get("content-length", "0")))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                if self.record:
                    self.requests.append(Seen(path, headers, body))
                step = self._next()
                if method == "GET" and path.rstrip("/").endswith("/models") and step.kind == "reply":
                    step = _Step("raw", raw=json.dumps(MODELS).encode())  # the list, unless a fault is scripted
                try:
                    keep = await self._answer(step, body, reader, writer)
                except _Gone:
                    self.abandoned += 1
                    return
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self.open -= 1
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    @staticmethod
    async def _pause(seconds: float, reader: asyncio.StreamReader) -> None:
        """Sleep ``seconds``; _Gone as soon as the client closes its connection."""
        if seconds <= 0:
            return
        eof = asyncio.ensure_future(reader.read(1))
        done, _ = await asyncio.wait({eof}, timeout=seconds)
        if done:
            raise _Gone
        eof.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await eof  # the read is gone before the next one starts

    async def _answer(self, step: _Step, body: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        await self._pause(step.delay, reader)
        model = body.get("model", "m") if isinstance(body, dict) else "m"
        if step.kind == "pieces":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            for n, piece in enumerate(step.pieces):
                if n:
                    await self._pause(step.gap, reader)
                self._chunk(writer, piece)
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        if step.kind == "raw":
            extra = f"Retry-After: {step.retry_after}\r\n" if step.retry_after else ""
            reason = "OK" if step.status == 200 else "Error"
            writer.write(
                f"HTTP/1.1 {step.status} {reason}\r\nContent-Type: {step.content_type}\r\n"
                f"Content-Length: {len(step.raw)}\r\n{extra}\r\n".encode()
                + step.raw
            )
            await writer.drain()
            return True
        if isinstance(body, dict) and body.get("stream"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            words = step.text.split(" ")
            for n, word in enumerate(words):
                piece = word if n == 0 else " " + word
                event = {"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 1, "model": model,
                         "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}  # fmt: skip
                self._chunk(writer, b"data: " + json.dumps(event).encode() + b"\n\n")
                await writer.drain()
                if step.cut:
                    return False  # the connection closes mid-stream
                await self._pause(self.chunk_delay, reader)
            end = {"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 1, "model": model,
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}  # fmt: skip
            self._chunk(writer, b"data: " + json.dumps(end).encode() + b"\n\n")
            self._chunk(writer, b"data: [DONE]\n\n")
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        data = {
            "id": "chatcmpl-up",
            "object": "chat.completion",
            "created": 1,
            "model": model,
            "system_fingerprint": "fp-upstream",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": step.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        payload = json.dumps(data).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(payload)).encode()
            + b"\r\n\r\n"
            + payload
        )
        await writer.drain()
        return True

    @staticmethod
    def _chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
