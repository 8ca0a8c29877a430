"""Turning a prompt into chat messages, and a reply back into plain text."""

from __future__ import annotations

import re
from collections.abc import Mapping

from norma.errors import InvalidInputError
from norma.llm._protocol import Prompt

__all__ = ["ROLES", "clean_reply", "to_messages"]

ROLES = frozenset({"system", "user", "assistant"})
"""The chat roles both protocols accept."""

_THINK = re.compile(r"^\s*<think>.*?</think>\s*", flags=re.DOTALL)


def to_messages(prompt: Prompt) -> list[dict[str, str]]:
    """``prompt`` as a list of ``{"role", "content"}`` dicts; a string becomes one user message."""
    if isinstance(prompt, str):
        if not prompt.strip():
            raise InvalidInputError("the prompt is empty", hint="pass the text to send to the model")
        return [{"role": "user", "content": prompt}]
    if isinstance(prompt, Mapping) or not hasattr(prompt, "__iter__"):
        raise InvalidInputError(
            f"a prompt must be a string or a list of messages, not {type(prompt).__name__}",
            hint='use "text" or [{"role": "user", "content": "text"}]',
        )
    messages: list[dict[str, str]] = []
    for index, message in enumerate(prompt):
        where = f"messages[{index}]"
        if not isinstance(message, Mapping):
            raise InvalidInputError(f"a message must be a mapping, not {type(message).__name__}", location=where)
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise InvalidInputError(
                f"unknown message role {role!r}", location=f"{where}.role", hint="use system, user or assistant"
            )
        if not isinstance(content, str):
            raise InvalidInputError("a message's content must be a string", location=f"{where}.content")
        messages.append({"role": str(role), "content": content})
    if not messages:
        raise InvalidInputError("the list of messages is empty", hint="pass at least one user message")
    return messages


def clean_reply(text: str) -> str:
    """The reply without a leading ``<think>...</think>`` block (reasoning models) or surrounding blanks."""
    return _THINK.sub("", text, count=1).strip()
