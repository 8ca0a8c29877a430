"""A scriptable fake LLM server on a loopback port, speaking the subset of Ollama and OpenAI that norma uses.

Tests talk real HTTP to it::

    with FakeLLMServer() as server:
        server.reply("hello")                      # next request gets "hello"
        server.error(503, retry_after=0.1)         # ... or a 503 with Retry-After
        client = OllamaClient(server.url, "m")     # /api/chat
        client = OpenAIClient(server.openai_url, "m", api_key="k")  # /v1/chat/completions
        server.requests[-1].headers["authorization"]

Routes: ``POST .../api/chat`` answers in Ollama's format, ``POST .../chat/completions`` in OpenAI's; anything else
is a 404. Each request takes the next scripted step (FIFO); with none left it gets ``default_reply`` (or what
``responder(messages)`` returns). ``models``, when set, makes unknown models a 404 as Ollama and OpenAI do;
``api_key``, when set, makes a missing or wrong bearer token a 401. Every request is recorded (path, lower-cased
headers, decoded JSON body, arrival time) in ``requests``. Other helpers' tests may import this module.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeLLMServer", "RecordedRequest", "Step"]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """The decoded JSON body (None when it was not JSON)."""
    at: float
    """``time.monotonic()`` when it arrived."""

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def messages(self) -> list[dict[str, str]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []


@dataclass(frozen=True)
class Step:
    """One scripted answer: ``reply`` (text), ``error`` (status), ``drop`` (close without answering) or ``raw``."""

    kind: str
    text: str = ""
    status: int = 200
    retry_after: str | None = None
    body: bytes | None = None
    content_type: str = "application/json"
    delay: float = 0.0
    model: str | None = None


@dataclass
class FakeLLMServer:
    """A ThreadingHTTPServer on 127.0.0.1:0 in a daemon thread; use as a context manager."""

    default_reply: str = "ok"
    responder: Callable[[list[dict[str, str]]], str] | None = None
    models: set[str] | None = None
    api_key: str | None = None
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._script: deque[Step] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------------------------------------

    def reply(self, text: str, *, times: int = 1, delay: float = 0.0, model: str | None = None) -> FakeLLMServer:
        """The next ``times`` requests get ``text`` (after ``delay`` seconds)."""
        return self._push(Step("reply", text=text, delay=delay, model=model), times)

    def error(
        self,
        status: int,
        *,
        times: int = 1,
        retry_after: float | str | None = None,
        message: str = "scripted error",
        delay: float = 0.0,
    ) -> FakeLLMServer:
        """The next ``times`` requests get HTTP ``status`` with ``{"error": message}`` (and ``Retry-After``)."""
        body = json.dumps({"error": message}).encode()
        ra = None if retry_after is None else (retry_after if isinstance(retry_after, str) else f"{retry_after:g}")
        return self._push(Step("error", status=status, retry_after=ra, body=body, delay=delay), times)

    def slow(self, seconds: float, text: str = "slow reply", *, times: int = 1) -> FakeLLMServer:
        """The next ``times`` requests wait ``seconds`` before answering ``text`` (to trigger read timeouts)."""
        return self.reply(text, times=times, delay=seconds)

    def drop(self, *, times: int = 1) -> FakeLLMServer:
        """The next ``times`` requests are read and then the connection is closed without a response."""
        return self._push(Step("drop"), times)

    def raw(self, body: bytes, *, status: int = 200, content_type: str = "application/json") -> FakeLLMServer:
        """The next request gets exactly ``body`` (e.g. something that is not a chat reply)."""
        return self._push(Step("raw", status=status, body=body, content_type=content_type), 1)

    def _push(self, step: Step, times: int) -> FakeLLMServer:
        with self._lock:
            self._script.extend([step] * times)
        return self

    def _next_step(self) -> Step | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    @property
    def pending(self) -> int:
        """Scripted steps not used yet."""
        with self._lock:
            return len(self._script)

    # -- addresses ---------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT``): Ollama clients add ``/api/chat``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def ollama_url(self) -> str:
        return f"{self.url}/api"

    @property
    def openai_url(self) -> str:
        """The OpenAI-style base (``.../v1``): clients add ``/chat/completions``."""
        return f"{self.url}/v1"

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once, not 40 ms apart (delayed ACK)

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                server._record(self, None)
                self._send(404, b"404 page not found", "text/plain")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                server._record(self, body)
                server._answer(self, body)

            def _send(self, status: int, payload: bytes, content_type: str, extra: Mapping[str, str] = {}) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- handling ----------------------------------------------------------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        headers = {key.lower(): value for key, value in handler.headers.items()}
        request = RecordedRequest(handler.command, handler.path, headers, body, time.monotonic())
        with self._lock:
            self.requests.append(request)

    def _answer(self, handler: Any, body: Any) -> None:
        path = handler.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/api/chat"):
            flavour = "ollama"
        elif path.endswith("/chat/completions"):
            flavour = "openai"
        else:
            handler._send(404, b"404 page not found", "text/plain")
            return
        if self.api_key is not None and handler.headers.get("Authorization") != f"Bearer {self.api_key}":
            handler._send(401, json.dumps({"error": {"message": "invalid api key"}}).encode(), "application/json")
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            handler._send(400, json.dumps({"error": "expected a JSON body with messages"}).encode(), "application/json")
            return
        model = str(body.get("model", ""))
        if self.models is not None and model not in self.models:
            message = f'model "{model}" not found, try pulling it first'
            handler._send(404, json.dumps({"error": message}).encode(), "application/json")
            return
        step = self._next_step()
        if step is not None and step.delay:
            self._stop.wait(step.delay)
        if step is not None and step.kind == "drop":
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if step is not None and step.kind in ("error", "raw"):
            extra = {"Retry-After": step.retry_after} if step.retry_after is not None else {}
            handler._send(step.status, step.body or b"", step.content_type, extra)
            return
        if step is not None:
            text = step.text
            model = step.model or model
        else:
            text = self.responder(body["messages"]) if self.responder is not None else self.default_reply
        handler._send(200, json.dumps(_chat_body(flavour, model, text)).encode(), "application/json")


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # the default 5 drops SYNs of concurrent clients: a 1 s retransmit each
    daemon_threads = True


def _chat_body(flavour: str, model: str, text: str) -> dict[str, Any]:
    if flavour == "ollama":
        return {
            "model": model,
            "created_at": "2026-11-22T00:00:00Z",
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": "stop",
        }
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }
