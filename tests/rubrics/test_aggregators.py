"""The aggregators: built-ins with hand-computed values, a read-only table, a caller's own function, unknown names."""

from __future__ import annotations

import math

import pytest

from norma.errors import RubricError
from norma.rubrics import (
    BUILTIN_AGGREGATORS,
    Rubric,
    aggregator_names,
    evaluate_outcome_against_rubric,
    get_aggregator,
)


def test_builtin_names() -> None:
    assert aggregator_names() == ["geometric_mean", "harmonic_mean", "max", "min"]


def test_min_max() -> None:
    assert get_aggregator("min")([0.3, 0.9, 0.5], [1, 1, 1]) == 0.3
    assert get_aggregator("max")([0.3, 0.9, 0.5], [1, 5, 1]) == 0.9
    assert get_aggregator("min")([], []) == 0.0


def test_weighted_geometric_mean() -> None:
    # exp((2 ln 0.25 + 1 ln 1) / 3) = 0.25 ** (2/3)
    assert get_aggregator("geometric_mean")([0.25, 1.0], [2.0, 1.0]) == pytest.approx(0.3968502629920499)
    assert get_aggregator("geometric_mean")([0.0, 1.0], [1.0, 1.0]) == 0.0
    assert get_aggregator("geometric_mean")([], []) == 0.0


def test_weighted_harmonic_mean() -> None:
    # (1 + 3) / (1/0.5 + 3/1.0) = 4 / 5
    assert get_aggregator("harmonic_mean")([0.5, 1.0], [1.0, 3.0]) == pytest.approx(0.8)
    assert get_aggregator("harmonic_mean")([0.5, 0.0], [1.0, 1.0]) == 0.0


@pytest.mark.parametrize("name", ["geometric_mean", "harmonic_mean"])
def test_means_refuse_negative_values(name: str) -> None:
    with pytest.raises(RubricError, match=f"{name} is undefined for negative values"):
        get_aggregator(name)([0.5, -0.1], [1.0, 1.0])


def test_unknown_name_lists_known_ones() -> None:
    with pytest.raises(RubricError, match="unknown aggregator 'median'") as caught:
        get_aggregator("median")
    assert caught.value.hint == (
        "known aggregators: geometric_mean, harmonic_mean, max, min; in Python, pass a function as aggregator="
    )


def test_the_builtin_table_is_read_only() -> None:
    with pytest.raises(TypeError):
        BUILTIN_AGGREGATORS["product"] = math.prod  # type: ignore[index]
    assert "product" not in BUILTIN_AGGREGATORS


def _product(values: list[float] | tuple[float, ...], weights: object) -> float:
    return math.prod(values)


def test_a_callers_function_is_passed_where_the_rubric_is_evaluated() -> None:
    rubric = Rubric.model_validate(
        {
            "version": "1",
            "aggregation": "custom",
            "criteria": [{"id": "a", "description": "A"}, {"id": "b", "description": "B"}],
        }
    )
    result = evaluate_outcome_against_rubric({"a": 0.5, "b": 0.5}, rubric, aggregator=_product)
    assert (result["reward"], result["aggregator"]) == (0.25, "_product")
    # passing it made no name: the next evaluation by name still knows only the built-ins
    with pytest.raises(RubricError, match="unknown aggregator '_product'"):
        evaluate_outcome_against_rubric({"a": 0.5, "b": 0.5}, rubric, aggregator="_product")
    assert aggregator_names() == ["geometric_mean", "harmonic_mean", "max", "min"]
