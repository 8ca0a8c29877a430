"""OpenAI-compatible chat completions: ``POST /v1/chat/completions`` with a bearer key.

Spoken by OpenAI, vLLM, llama.cpp's server, LM Studio, LiteLLM, Ollama's ``/v1`` and Gemini's OpenAI-compatible
endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from norma.llm._config import BackendKind
from norma.llm._http import ChatClient
from norma.llm._protocol import ReplySchema

__all__ = ["OpenAIClient"]


class OpenAIClient(ChatClient):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``url`` is the API base: ``https://api.openai.com/v1``, ``http://localhost:8000/v1``,
    ``https://generativelanguage.googleapis.com/v1beta/openai``; ``/chat/completions`` is added unless the URL
    already ends with it, and a bare host gets ``/v1/chat/completions``. A reply schema goes in
    ``response_format`` (``json_schema``, strict).
    """

    kind: ClassVar[BackendKind] = "openai"
    schema_field: ClassVar[str] = "response_format"

    def _endpoint(self, url: str) -> str:
        parts = urlsplit(url)
        path = parts.path.rstrip("/")
        if not path.endswith("/chat/completions"):
            path = f"{path}/chat/completions" if path else "/v1/chat/completions"
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
        body: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature, "stream": False}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if seed is not None:
            body["seed"] = seed
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.name, "schema": dict(schema.schema), "strict": True},
            }
        return body

    def _parse(self, data: Any) -> tuple[str, str | None]:
        if not isinstance(data, Mapping):
            raise TypeError("the body is not a JSON object")
        choice = data["choices"][0]
        content = choice["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("choices[0].message.content is not a string")
        model = data.get("model")
        return content, model if isinstance(model, str) else None
