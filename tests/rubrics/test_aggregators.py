"""The aggregator registry: built-ins with hand-computed values, registration, unknown names."""

from __future__ import annotations

import math

import pytest

from norma.errors import RubricError
from norma.rubrics import aggregator_names, get_aggregator, register_aggregator


def test_builtin_names() -> None:
    assert {"min", "max", "geometric_mean", "harmonic_mean"} <= set(aggregator_names())
    assert aggregator_names() == sorted(aggregator_names())


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
    assert "geometric_mean" in str(caught.value)


def test_register_and_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    from norma.rubrics import _aggregators

    # the registry is the process's: a copy for this test, so no other test in the process sees test_product
    monkeypatch.setattr(_aggregators, "_REGISTRY", dict(_aggregators._REGISTRY))

    def product(values: list[float] | tuple[float, ...], weights: object) -> float:
        return math.prod(values)

    register_aggregator("test_product", product, replace=True)
    assert get_aggregator("test_product")([0.5, 0.5], [1, 1]) == 0.25
    assert "test_product" in aggregator_names()
    with pytest.raises(RubricError, match="already registered"):
        register_aggregator("test_product", product)
    with pytest.raises(RubricError, match="already registered"):
        register_aggregator("min", product)
    with pytest.raises(RubricError, match="non-empty name"):
        register_aggregator(" ", product)
