"""The one interface every LLM backend has, and the schema a caller may ask a reply to follow."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["LLMClient", "Messages", "Prompt", "ReplySchema", "accepts_schema"]

Messages = Sequence[Mapping[str, str]]
"""Chat messages: ``[{"role": "system" | "user" | "assistant", "content": "..."}, ...]``."""

Prompt = str | Messages
"""A bare prompt (sent as one user message) or a list of chat messages."""


@dataclass(frozen=True)
class ReplySchema:
    """The JSON Schema a reply must follow (structured output), with the name servers want for it.

    An OpenAI-compatible server gets it as ``response_format: {"type": "json_schema", "json_schema": {"name",
    "schema", "strict": true}}``, Ollama as ``format``. It constrains what the server generates; the caller still
    reads the reply strictly, since a server may ignore it.
    """

    name: str
    """A short identifier (letters, digits, ``_`` and ``-``), e.g. ``norma_verdict``."""
    schema: Mapping[str, Any]
    """The JSON Schema of the reply (an object with every property required and no other: OpenAI's strict mode)."""


@runtime_checkable
class LLMClient(Protocol):
    """Sends a prompt to a chat model and returns the text of its reply.

    Implementations retry what is worth retrying (429, 5xx, dropped connections) and raise
    :class:`norma.errors.BackendError` naming the endpoint and the last status when they give up; an API key never
    appears in an error message, a log line or a ``repr``.
    """

    model: str

    def complete(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        schema: ReplySchema | None = None,
    ) -> str:
        """The model's reply to ``prompt_or_messages`` (a string is sent as one user message).

        ``schema``, when given and the server supports it, constrains the reply to that JSON Schema. Optional for
        implementations: callers pass it only to a client whose ``complete`` takes it (:func:`accepts_schema`).
        """
        ...

    async def acomplete(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        schema: ReplySchema | None = None,
    ) -> str:
        """Same as :meth:`complete`, without blocking the event loop."""
        ...


def accepts_schema(client: object) -> bool:
    """Whether ``client.complete`` and ``client.acomplete`` take a ``schema`` argument (clients written before it
    was added do not: they are called without one, and their replies read as before)."""
    kind = type(client)
    known = _ACCEPTS_SCHEMA.get(kind)
    if known is None:
        known = _ACCEPTS_SCHEMA[kind] = _takes_schema(kind)
    return known


_ACCEPTS_SCHEMA: dict[type, bool] = {}


def _takes_schema(kind: type) -> bool:
    for name in ("complete", "acomplete"):
        method = getattr(kind, name, None)
        if method is None:
            return False
        try:
            parameters = inspect.signature(method).parameters.values()
        except (TypeError, ValueError):
            return False
        if not any(p.name == "schema" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            return False
    return True
