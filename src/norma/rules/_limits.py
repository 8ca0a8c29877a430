"""The limits every rule obeys, and the walker that keeps JSON values given in Python (metadata, a check's schema)
within them. Kept apart from :mod:`norma.rules._model` so that the check models, which the rule holds, use them too.
"""

from __future__ import annotations

import math
from typing import Any

from norma._safety import DEFAULT_LIMITS, is_unicode

__all__ = [
    "MAX_METADATA_CHARS",
    "MAX_METADATA_DEPTH",
    "MAX_METADATA_VALUES",
    "MAX_RULE_ID_LENGTH",
    "MAX_RULE_ITEMS",
    "MAX_RULE_TEXT_CHARS",
    "JsonChecker",
]

MAX_RULE_ID_LENGTH = 200
"""Longest rule id accepted (ids travel in URLs and database keys)."""
MAX_RULE_TEXT_CHARS = 10_000
"""Longest ``condition_text`` / ``action_text`` and longest example (the model reads 256 tokens of each)."""
MAX_RULE_ITEMS = 200
"""Most examples, and most tags, one rule may carry."""
MAX_METADATA_DEPTH = DEFAULT_LIMITS.max_depth - 3
"""Deepest nesting of a rule's ``metadata``, counted as the bounded parsers count (the mapping is level 1, what it
holds level 2, ...): 61, so that a rule fits, metadata included, in a rulebook (document, ``rules`` list, rule: 3
levels) and in a request body under their limit of 64 levels."""
MAX_METADATA_VALUES = 100_000
"""Most values (keys, scalars, lists, mappings) in a rule's ``metadata``."""
MAX_METADATA_CHARS = 1_000_000
"""Most characters in a rule's ``metadata``, its keys and strings together."""
_MAX_INT_BITS = 14_284
"""Integers in ``metadata`` stay below 2**14284 (fewer than 4,300 digits): Python writes and reads them as text."""


def _short(path: str) -> str:
    return path if len(path) <= 120 else path[:117] + "..."


class JsonChecker:
    """Walks a JSON value given in Python (a rule's metadata, a check's schema): JSON values only, at most
    ``max_depth`` levels deep, :data:`MAX_METADATA_VALUES` values and :data:`MAX_METADATA_CHARS` characters;
    :meth:`check` returns a copy with tuples made lists. Problems are ``ValueError`` (pydantic reports them)."""

    def __init__(self, max_depth: int = MAX_METADATA_DEPTH) -> None:
        self.max_depth = max_depth
        self.values = 0
        self.chars = 0

    def check(self, value: Any, path: str = "metadata", depth: int = 1) -> Any:
        if depth > self.max_depth:
            raise ValueError(f"nests deeper than {self.max_depth} levels (at {_short(path)})")
        self.values += 1
        if self.values > MAX_METADATA_VALUES:
            raise ValueError(f"holds more than {MAX_METADATA_VALUES:,} values")
        if isinstance(value, str):
            return self._text(value, path)
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            if value.bit_length() > _MAX_INT_BITS:
                raise ValueError(f"value at {_short(path)} is an integer of 4,300 digits or more; write it as text")
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"value at {_short(path)} must be a finite number")
            return value
        if isinstance(value, list | tuple):
            return [self.check(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if not isinstance(key, str):
                    raise ValueError(f"key {key!r} at {_short(path)} must be a string")
                self.values += 1
                self._text(key, path)
                out[key] = self.check(item, f"{path}.{key[:40]}", depth + 1)
            return out
        raise ValueError(f"value at {_short(path)} is a {type(value).__name__}, not a JSON value")

    def _text(self, text: str, path: str) -> str:
        if not is_unicode(text):
            raise ValueError(f"text at {_short(path)} is not valid Unicode (a lone surrogate)")
        self.chars += len(text)
        if self.chars > MAX_METADATA_CHARS:
            raise ValueError(f"holds more than {MAX_METADATA_CHARS:,} characters")
        return text
