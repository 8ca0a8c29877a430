"""The one interface every LLM backend has."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["LLMClient", "Messages", "Prompt"]

Messages = Sequence[Mapping[str, str]]
"""Chat messages: ``[{"role": "system" | "user" | "assistant", "content": "..."}, ...]``."""

Prompt = str | Messages
"""A bare prompt (sent as one user message) or a list of chat messages."""


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
    ) -> str:
        """The model's reply to ``prompt_or_messages`` (a string is sent as one user message)."""
        ...

    async def acomplete(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> str:
        """Same as :meth:`complete`, without blocking the event loop."""
        ...
