"""Hypothesis strategies and builders for rule texts and metadata, shared by the rulebook and store round trips."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

__all__ = ["METADATA_VALUES", "RULE_TEXTS", "nested"]

RULE_TEXTS = st.text(min_size=1, max_size=60).filter(str.strip)
"""Non-blank texts of every code point but surrogates (Cc, NEL, LS, PS and the like included)."""

_TRICKY = ["x\x85\u2028y", "\x85", "\u2029 ", "a\r\nb\r", "\ufeff", "\x00", "null", "~", "1e999", "- x", "'\""]
"""Strings YAML and JSON writers are known to mangle or to read back as something else."""

METADATA_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=30),
        st.sampled_from(_TRICKY),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=15,
)
"""JSON values a rule's metadata may hold."""


def nested(depth: int) -> dict[str, Any]:
    """Metadata nested exactly ``depth`` levels (the mapping is level 1; the innermost value the last level)."""
    value: Any = "bottom"
    for _ in range(depth - 1):
        value = {"k": value}
    assert isinstance(value, dict)
    return value
