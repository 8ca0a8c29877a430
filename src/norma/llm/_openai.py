"""OpenAI-compatible chat completions: ``POST /v1/chat/completions`` with a bearer key.

Spoken by OpenAI, vLLM, llama.cpp's server, LM Studio, LiteLLM, Ollama's ``/v1`` and Gemini's OpenAI-compatible
endpoint.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import httpx

from norma.llm._config import BackendKind, redact_url
from norma.llm._faults import Fault, LLMBackendError
from norma.llm._http import ChatClient, Parsed, stream_object
from norma.llm._pool import aconnection
from norma.llm._protocol import ReplySchema, Usage

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
    stream_type: ClassVar[str] = "text/event-stream"
    stream_end: ClassVar[str] = "[DONE]"

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

    def _parse(self, data: Any) -> Parsed:
        choices = data.get("choices") if isinstance(data, Mapping) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise ValueError("answered without choices")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, str):
            raise ValueError("'s answer has no text content (choices[0].message.content)")
        model, finish = data.get("model"), choices[0].get("finish_reason")
        return Parsed(
            content,
            model if isinstance(model, str) else None,
            finish if isinstance(finish, str) else None,
            Usage.of(data.get("usage")),
        )

    def _stream_line(self, line: str) -> tuple[Mapping[str, Any] | None, bool]:
        """Server-sent events: ``data: {chunk}`` lines, ``data: [DONE]`` at the end; other lines are comments, event
        names and separators."""
        if not line.startswith("data:"):
            return None, False
        payload = line[5:].strip()
        if payload == "[DONE]":
            return None, True
        event = stream_object(payload, "an event")
        if "error" in event and "choices" not in event:
            said = event["error"].get("message", "") if isinstance(event["error"], dict) else ""
            raise ValueError(f"failed mid-stream: {said}")
        return event, False

    def _delta_text(self, event: Mapping[str, Any]) -> str:
        for choice in event.get("choices") or ():
            if isinstance(choice, Mapping) and choice.get("index", 0) == 0:
                delta = choice.get("delta")
                content = delta.get("content") if isinstance(delta, Mapping) else None
                return content if isinstance(content, str) else ""
        return ""

    async def amodels(self) -> dict[str, Any]:
        """The server's model list (``GET {url}/models``: OpenAI's ``{"object": "list", "data": [...]}``), as it sent
        it; :class:`LLMBackendError` for any fault or an answer of another shape."""
        url = self.endpoint.removesuffix("/chat/completions") + "/models"
        try:
            async with aconnection(self.http) as client, asyncio.timeout(self.settings.read_timeout):
                response = await client.get(url, headers=self._headers(), timeout=self._timeout())
        except TimeoutError:
            fault = Fault("timeout", seconds=self.settings.read_timeout)
        except httpx.TransportError as exc:
            fault = Fault.of_transport(exc, self.settings.read_timeout)
        else:
            if response.status_code >= 400:
                fault = Fault.of_status(response, response.content, self.settings.api_key)
            else:
                try:
                    return _model_list(response.content)
                except ValueError as exc:
                    fault = Fault.garbage(str(exc), response.status_code)
        raise LLMBackendError(
            f"the LLM server did not list its models: {fault.reason}",
            endpoint=redact_url(url),
            status=fault.status,
            attempts=1,
            fault=fault,
        )


def _model_list(body: bytes) -> dict[str, Any]:
    """OpenAI's model list in an answer's body; ValueError (after "the upstream") when it is not one."""
    try:
        data = json.loads(body)
    except ValueError:
        raise ValueError("'s model list is not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError("'s model list is not an OpenAI list (no data array)")
    return data
