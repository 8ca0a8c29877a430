"""Ollama's native chat API: ``POST /api/chat`` with ``stream: false``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from norma.llm._config import BackendKind
from norma.llm._http import ChatClient
from norma.llm._protocol import ReplySchema

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

    def _parse(self, data: Any) -> tuple[str, str | None]:
        if not isinstance(data, Mapping):
            raise TypeError("the body is not a JSON object")
        message = data["message"]
        content = message["content"] if isinstance(message, Mapping) else None
        if not isinstance(content, str):
            raise TypeError("message.content is not a string")
        model = data.get("model")
        return content, model if isinstance(model, str) else None
