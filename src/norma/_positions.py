"""Where a field of a rulebook file is written: the 1-based line and column of its YAML (or JSON) node.

A rulebook is parsed into plain values first; only when it has problems is its text read again into PyYAML nodes
(``yaml.compose``: no values built, aliases not expanded, so linear in the text that was already accepted), and
each problem's field path (``rules[0].checks[1].kind``) is followed down the nodes. A field is placed at its value;
at its key when the value is empty (``kind:`` and nothing after it); at the nearest enclosing mapping or list when
the file does not have it (a required field left out).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import yaml

__all__ = ["NodePositions", "field_parts"]

_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def field_parts(path: str) -> list[str | int]:
    """The steps of a field path: ``"checks[1].kind"`` -> ``["checks", 1, "kind"]``."""
    return [int(index) if index else name for index, name in _PART.findall(path)]


class NodePositions:
    """The node tree of a YAML or JSON text, to look up where a field path is written."""

    def __init__(self, root: yaml.Node) -> None:
        self._root = root

    @classmethod
    def read(cls, text: str | bytes, *, is_json: bool = False) -> NodePositions | None:
        """The positions of ``text``, or None when it has no nodes or PyYAML cannot read it (some valid JSON)."""
        if is_json:
            if isinstance(text, bytes):
                text = text.decode(json.detect_encoding(text), "replace")
            # a tab in valid JSON is whitespace (a string holds it as \t), which YAML refuses in places: one
            # character for another keeps every column
            text = text.replace("\t", " ")
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except (yaml.YAMLError, ValueError, RecursionError):
            return None
        return None if root is None else cls(root)

    def find(self, path: Sequence[str | int]) -> tuple[int, int]:
        """(line, column), 1-based, of the node written for ``path`` (see the module docstring)."""
        node: yaml.Node = self._root
        key: yaml.Node | None = None
        for part in path:
            child: yaml.Node | None = None
            if isinstance(node, yaml.MappingNode) and isinstance(part, str):
                for name, value in node.value:  # the last of duplicate keys is the one read
                    if isinstance(name, yaml.ScalarNode) and name.value == part:
                        child, key = value, name
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                child, key = node.value[part], None
            if child is None:
                break
            node = child
        else:
            if key is not None and isinstance(node, yaml.ScalarNode) and node.start_mark.index == node.end_mark.index:
                node = key  # `kind:` with nothing after it: the key
        return node.start_mark.line + 1, node.start_mark.column + 1
