"""Ollama's native chat API: ``POST /api/chat``, whole (``stream: false``) or as it comes (one JSON object a line)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from norma.llm._config import BackendKind
from norma.llm._http import ChatClient, Parsed, stream_object
from norma.llm._protocol import ReplySchema, Usage

__all__ = ["OllamaClient"]


class OllamaClient(ChatClient):
    """A model served by Ollama (``ollama serve``, port 11434 by default).

    ``url`` is the server (``http://localhost:11434``), optionally behind a path prefix; ``/api/chat`` is added
    unless the URL already ends with it. ``temperature``, ``seed`` and ``max_tokens`` (Ollama's ``num_predict``)
    go into ``options``. An ``api_key``, if given, is sent as a bearer token (for Ollama behind a proxy). A reply
    schema goes in ``format`` (Ollama 0.5 and later).
    """

    kind: ClassVar[BackendKind] = "ollama"
    schema_field: ClassVar[str] = "format"
    stream_type: ClassVar[str] = "application/x-ndjson"
    stream_end: ClassVar[str] = "done"
    whole: ClassVar[Mapping[str, Any]] = {"stream": False}

    def _endpoint(self, url: str) -> str:
        parts = urlsplit(url)
        path = parts.path.rstrip("/")
        if not path.endswith("/api/chat"):
            path = f"{path}/chat" if path.endswith("/api") else f"{path}/api/chat"
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))

    def _body(
        self,
        model: str,
        messages: list[dict[str, str]],
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
        schema: ReplySchema | None,
    ) -> dict[str, Any]:
        options: dict[str, Any] = {"temperature": temperature}
        if seed is not None:
            options["seed"] = seed
        if max_tokens is not None:
            options["num_predict"] = max_tokens
        body: dict[str, Any] = {"model": model, "messages": messages, "stream": False, "options": options}
        if schema is not None:
            body["format"] = dict(schema.schema)
        return body

    def _parse(self, data: Any) -> Parsed:
        message = data.get("message") if isinstance(data, Mapping) else None
        if not isinstance(message, Mapping):
            raise ValueError("answered without a message")
        content = message.get("content")
        if not isinstance(content, str):
            raise ValueError("'s answer has no text content (message.content)")
        model, finish = data.get("model"), data.get("done_reason")
        prompt, completion = data.get("prompt_eval_count"), data.get("eval_count")
        usage = None
        if isinstance(prompt, int) and isinstance(completion, int):
            usage = Usage(prompt, completion, prompt + completion)
        return Parsed(
            content, model if isinstance(model, str) else None, finish if isinstance(finish, str) else None, usage
        )

    def _stream_line(self, line: str) -> tuple[Mapping[str, Any] | None, bool]:
        """One JSON object a line; the last has ``done: true``."""
        if not line.strip():
            return None, False
        event = stream_object(line, "a line")
        if "error" in event:
            raise ValueError(f"failed mid-stream: {event['error']}")
        return event, event.get("done") is True

    def _delta_text(self, event: Mapping[str, Any]) -> str:
        message = event.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        return content if isinstance(content, str) else ""
