"""One way to turn the matching package's result records (frozen dataclasses) into JSON-ready mappings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

__all__ = ["record_dict"]


def _ready(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(key): _ready(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_ready(item) for item in value]
    return value


def record_dict(record: Any, *derived: str) -> dict[str, Any]:
    """``record``'s fields in declaration order, then the ``derived`` attributes (properties, or methods taking no
    argument, which are called), JSON-ready: nested records through their ``to_dict``, tuples as lists, mapping
    keys as strings."""
    out = {item.name: _ready(getattr(record, item.name)) for item in fields(record)}
    for name in derived:
        value = getattr(record, name)
        out[name] = _ready(value() if callable(value) else value)
    return out
