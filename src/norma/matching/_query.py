"""Turning messages into query vectors: input checks, empty messages, and messages longer than the model's window.

* An empty or whitespace-only message matches nothing (an empty result, not an error): a turn can carry no text.
* A message the model would truncate (all-MiniLM-L6-v2 sees 256 word pieces) is, with ``long_messages="chunk"``,
  split on whitespace into windows that each fit, at most ``max_chunks`` of them; each window is embedded and a
  rule's similarity is its max over the windows. BM25 always sees the whole message. With ``"truncate"`` (or an
  embedder that cannot count tokens) the embedder's own truncation applies. Text past ``max_chunks`` windows is
  ignored by the vector side.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from norma.embeddings import Embedder
from norma.errors import InvalidInputError, LimitExceededError
from norma.matching._config import MatchConfig

__all__ = [
    "check_message_sizes",
    "check_messages",
    "checked_query_vector",
    "embed_messages",
    "split_windows",
    "wanted_tags",
]


def check_messages(messages: Sequence[object]) -> list[str]:
    """The messages as strings, or an :class:`InvalidInputError` naming the first one that is not."""
    if isinstance(messages, str | bytes):
        raise InvalidInputError("match_many() takes a list of messages, not one string", hint="wrap it in a list")
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, str):
            raise InvalidInputError(
                f"message {index} is a {type(message).__name__}, not a str", location=f"messages[{index}]"
            )
        out.append(message)
    return out


def check_message_sizes(messages: Sequence[str], max_chars: int) -> None:
    """A :class:`LimitExceededError` for the first message longer than ``max_chars`` characters."""
    for index, message in enumerate(messages):
        if len(message) > max_chars:
            one = len(messages) == 1
            raise LimitExceededError(
                f"{'the message' if one else f'message {index}'} is {len(message):,} characters, over the limit of "
                f"{max_chars:,}",
                location=None if one else f"messages[{index}]",
                hint="shorten the message, or raise MatchConfig.max_message_chars",
            )


def wanted_tags(tags: object) -> list[str] | None:
    """The tag filter as a list of strings (one string is one tag); InvalidInputError for anything else."""
    if tags is None:
        return None
    if isinstance(tags, str):
        return [tags]
    if not isinstance(tags, Iterable) or isinstance(tags, bytes | Mapping):
        raise InvalidInputError(f"tags must be a list of strings, not a {type(tags).__name__}", location="tags")
    wanted = list(tags)
    for index, tag in enumerate(wanted):
        if not isinstance(tag, str):
            raise InvalidInputError(f"tags[{index}] is a {type(tag).__name__}, not a str", location=f"tags[{index}]")
    return wanted


def checked_query_vector(vector: object, index: int) -> np.ndarray:
    """A caller's message vector as ``(windows, dim)`` float32; InvalidInputError unless finite and non-zero."""
    try:
        array = np.atleast_2d(np.asarray(vector, dtype=np.float32))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"query_vectors[{index}] is not a numeric array: {exc}") from None
    if array.ndim != 2 or array.size == 0:
        raise InvalidInputError(f"query_vectors[{index}] has shape {array.shape}, expected (dim,) or (windows, dim)")
    if not np.isfinite(array).all() or not np.einsum("ij,ij->i", array, array).all():  # a window of zeros
        raise InvalidInputError(
            f"query_vectors[{index}] must be finite and non-zero in every window",
            hint="pass the message's embedding, or omit query_vector to embed the message",
        )
    return array


def split_windows(embedder: Embedder, text: str, max_chunks: int) -> list[str]:
    """``text`` as whitespace-split windows the model sees whole (one window when it already fits)."""
    count_tokens = getattr(embedder, "token_counts", None)
    window = getattr(embedder, "max_seq_length", None)
    if count_tokens is None or not isinstance(window, int):
        return [text]
    if count_tokens([text])[0] < window:
        return [text]
    words = text.split()
    budget = window - 2
    costs = [max(c - 2, 1) for c in count_tokens(words)]
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for word, cost in zip(words, costs, strict=True):
        if current and used + cost > budget:
            chunks.append(" ".join(current))
            if len(chunks) == max_chunks:
                return chunks
            current, used = [], 0
        current.append(word)
        used += cost
    if current:
        chunks.append(" ".join(current))
    return chunks[:max_chunks]


def embed_messages(embedder: Embedder, messages: Sequence[str], config: MatchConfig) -> list[np.ndarray | None]:
    """One ``(windows, dim)`` array per message (None for an empty message), from one embedding call."""
    windows: list[list[str]] = []
    for message in messages:
        if not message.strip():
            windows.append([])
        elif config.long_messages == "chunk":
            windows.append(split_windows(embedder, message, config.max_chunks))
        else:
            windows.append([message])
    flat = [w for group in windows for w in group]
    vectors = embedder.embed(flat) if flat else np.zeros((0, embedder.dim), dtype=np.float32)
    out: list[np.ndarray | None] = []
    start = 0
    for group in windows:
        if not group:
            out.append(None)
            continue
        out.append(np.asarray(vectors[start : start + len(group)], dtype=np.float32))
        start += len(group)
    return out
