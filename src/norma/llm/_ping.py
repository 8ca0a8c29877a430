"""A quick round trip to the configured LLM: does it answer, which model, how fast."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from norma.llm._config import redact_url
from norma.llm._protocol import ChatReply, LLMClient, reply_text

__all__ = ["PING_PROMPT", "LLMPing", "ping_llm"]

PING_PROMPT = "Reply with the single word: ok"
"""The prompt :func:`ping_llm` sends unless told otherwise."""


@dataclass(frozen=True)
class LLMPing:
    """The outcome of one successful :func:`ping_llm` round trip."""

    endpoint: str
    """The URL that answered, without credentials (empty when the client does not say)."""
    model: str
    """The model that answered."""
    latency_ms: float
    """Milliseconds from sending the prompt to the reply, retries included."""
    attempts: int
    """Requests sent."""
    reply: str
    """What the model said."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the fields."""
        return asdict(self)


def ping_llm(client: LLMClient, prompt: str = PING_PROMPT, *, max_tokens: int = 16) -> LLMPing:
    """Send ``prompt`` through ``client`` and report the model and latency; raises BackendError when it fails."""
    started = time.perf_counter()
    reply = client.complete(prompt, temperature=0.0, max_tokens=max_tokens)
    elapsed = time.perf_counter() - started
    if isinstance(reply, ChatReply):
        return LLMPing(
            redact_url(reply.endpoint), reply.model, round(reply.latency_s * 1000, 1), reply.attempts, reply.text
        )
    return LLMPing("", client.model, round(elapsed * 1000, 1), 1, reply_text(reply))
