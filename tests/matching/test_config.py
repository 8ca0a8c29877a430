from __future__ import annotations

import math

import pytest

from norma.errors import InvalidInputError
from norma.matching import MatchConfig, Scope


def test_adr_preset_has_the_adr_values() -> None:
    config = MatchConfig.adr()
    assert (config.vector_weight, config.bm25_weight) == (0.7, 0.3)
    assert (config.hybrid_weight, config.priority_weight, config.scope_weight) == (0.6, 0.3, 0.1)
    assert config.scope_weights == {Scope.GLOBAL: 1.0, Scope.SCENARIO: 1.1, Scope.STEP: 1.2}
    assert (config.threshold, config.threshold_on) == (0.5, "final")
    assert (config.max_candidates, config.max_matched) == (30, 10)
    assert (config.bm25_normalization, config.bm25_text, config.candidate_pool) == ("minmax", "condition", "vector")


def test_default_keeps_the_adr_weights() -> None:
    config = MatchConfig()
    assert (config.vector_weight, config.bm25_weight, config.hybrid_weight) == (0.7, 0.3, 0.6)
    assert (config.max_candidates, config.max_matched, config.hnsw_min_rows) == (30, 10, 50_000)


@pytest.mark.parametrize("field", ["vector_weight", "bm25_weight", "hybrid_weight", "priority_weight", "threshold"])
def test_nan_weights_are_refused_naming_the_field(field: str) -> None:
    with pytest.raises(InvalidInputError, match=field):
        MatchConfig(**{field: math.nan})


def test_bad_values_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="max_matched"):
        MatchConfig(max_matched=0)
    with pytest.raises(InvalidInputError, match="vector_weight"):
        MatchConfig(vector_weight=-1)
    with pytest.raises(InvalidInputError, match="scope_weights"):
        MatchConfig(scope_weights={Scope.GLOBAL: 1.0})
    with pytest.raises(InvalidInputError, match="priority_range"):
        MatchConfig(priority_range=(5, 5))
    with pytest.raises(InvalidInputError, match="unknown_option"):
        MatchConfig(unknown_option=1)


def test_with_changes_one_field() -> None:
    config = MatchConfig().with_(threshold=None)
    assert config.threshold is None
    assert config.vector_weight == 0.7
