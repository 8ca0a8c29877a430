"""Input generators shared by the fuzz tests: JSON-like values biased toward the fields our formats use."""

from __future__ import annotations

import json
import os
from typing import Any

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ_EXAMPLES = int(os.environ.get("NORMA_FUZZ_EXAMPLES", "150"))
"""Examples per fuzz test: small in ``make test``, 100,000 in ``make fuzz``."""

FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["", " ", "sum", "weighted_sum", "custom", "mean", "global", "step", "IR.4.02", "{name}", "\x00"]),
)


def json_values(keys: list[str], *, max_leaves: int = 25) -> st.SearchStrategy[Any]:
    """Nested JSON-like values whose mapping keys are mostly drawn from ``keys`` (so parsers go deep)."""
    key_strategy = st.one_of(st.sampled_from(keys), st.text(max_size=12)) if keys else st.text(max_size=12)
    return st.recursive(
        _SCALARS,
        lambda children: st.one_of(
            st.lists(children, max_size=5),
            st.dictionaries(key_strategy, children, max_size=6),
        ),
        max_leaves=max_leaves,
    )


def as_text(value: Any, style: str) -> str:
    """``value`` serialised as JSON or YAML text (or repr, for free-form text)."""
    if style == "json":
        return json.dumps(value, allow_nan=True)
    if style == "yaml":
        return yaml.safe_dump(value, allow_unicode=True)
    return str(value)
