"""The one interface every chat model has (:class:`LLMClient`), the typed reply it gives (:class:`ChatReply`, and
:class:`ChatDelta` for a streamed one), and the schema a caller may ask a reply to follow."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ChatDelta",
    "ChatReply",
    "LLMClient",
    "Messages",
    "Prompt",
    "ReplySchema",
    "Usage",
    "accepts_schema",
    "reply_text",
]

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


@dataclass(frozen=True)
class Usage:
    """The tokens a reply cost, as the server counted them (None: it did not say)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None

    @classmethod
    def of(cls, data: object) -> Usage | None:
        """The usage of an OpenAI ``usage`` object (None when it is not one)."""
        if not isinstance(data, Mapping):
            return None
        counts = [data.get(name) for name in ("prompt_tokens", "completion_tokens", "total_tokens")]
        return cls(*(n if isinstance(n, int) and not isinstance(n, bool) else None for n in counts))


@dataclass(frozen=True)
class ChatReply:
    """One answered chat request."""

    text: str
    """The reply, without a leading ``<think>`` block and surrounding blanks."""
    model: str
    """The model that answered (as the server names it)."""
    endpoint: str
    """The URL that answered, without credentials."""
    latency_s: float
    """Seconds from the first request to the reply, retries included."""
    attempts: int
    """Requests sent (1 when nothing was retried)."""
    content: str = ""
    """The reply exactly as the server sent it (what a gateway passes on)."""
    finish_reason: str | None = None
    """Why the model stopped (``stop``, ``length``, ...; None when the server did not say)."""
    usage: Usage | None = None
    """The tokens it cost, when the server counted them."""
    raw: Mapping[str, Any] | None = None
    """The server's whole answer, decoded (a gateway relays it with its text replaced)."""


@dataclass(frozen=True)
class ChatDelta:
    """Events of a streamed reply that arrived together (a relay writes them at once)."""

    events: tuple[Mapping[str, Any], ...]
    """The server's events as it sent them (OpenAI's ``chat.completion.chunk`` objects, Ollama's lines)."""
    text: str
    """The text they add to the reply."""


def reply_text(reply: ChatReply | str) -> str:
    """The text of what a client's ``complete`` returned (a client written before :class:`ChatReply` returns the
    text itself)."""
    return reply if isinstance(reply, str) else reply.text


@runtime_checkable
class LLMClient(Protocol):
    """Sends a prompt to a chat model and returns its reply (:class:`ChatReply`), whole or as it comes
    (:class:`ChatDelta`), from a thread or an event loop.

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
    ) -> ChatReply:
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
    ) -> ChatReply:
        """Same as :meth:`complete`, without blocking the event loop."""
        ...

    def stream(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Iterator[ChatDelta]:
        """The reply to ``prompt_or_messages`` as it comes (the arguments of :meth:`complete`). Norma asks for it only
        where it relays a reply as it comes (the guarded endpoint's ``flag`` streams)."""
        ...

    def astream(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[ChatDelta]:
        """Same as :meth:`stream`, without blocking the event loop."""
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
