"""Example-centroid pooling: the vector score blends the best example with the centre of the rule's examples."""

from __future__ import annotations

import math

import pytest

from norma.errors import InvalidInputError
from norma.matching import MatchConfig, Rule, RuleMatcher
from tests.matching.conftest import AxisEmbedder

# "refund" is axis 0, "card" axis 1; a text with both is (1, 1) / sqrt(2).
RULE = Rule(id="r", condition_text="zzz", examples=["refund", "refund card"])


def _best(matcher: RuleMatcher, config: MatchConfig) -> tuple[float, float, float | None]:
    (match,) = matcher.match("refund", config=config.with_(threshold=None), explain=True)
    return match.similarity_score, match.explanation.vector_score, match.explanation.example_centroid


def test_centroid_blend_by_hand(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([RULE], embedder=axis)
    # mean of the examples: ((1 + 1/sqrt 2) / 2, (1/sqrt 2) / 2); the query is axis 0
    mean = ((1 + 1 / math.sqrt(2)) / 2, (1 / math.sqrt(2)) / 2)
    centroid = mean[0] / math.hypot(*mean)
    similarity, vector, found = _best(matcher, MatchConfig(example_centroid_weight=0.3))
    assert similarity == pytest.approx(1.0)  # the max over the rule's texts, unchanged
    assert found == pytest.approx(centroid)
    assert centroid == pytest.approx(0.9238795, abs=1e-6)
    assert vector == pytest.approx(0.7 * 1.0 + 0.3 * centroid)


def test_weight_zero_and_the_adr_config_keep_the_plain_max(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([RULE], embedder=axis)
    assert MatchConfig.adr().example_centroid_weight == 0.0
    for config in (MatchConfig(example_centroid_weight=0.0), MatchConfig.adr()):
        similarity, vector, found = _best(matcher, config)
        assert (similarity, found) == (pytest.approx(1.0), None)
        assert vector == pytest.approx(1.0)


def test_rules_with_fewer_than_two_examples_are_not_blended(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([Rule(id="r", condition_text="zzz", examples=["refund card"])], embedder=axis)
    similarity, vector, found = _best(matcher, MatchConfig(example_centroid_weight=0.5))
    assert found is None
    assert vector == similarity == pytest.approx(1 / math.sqrt(2))


def test_centroid_follows_rule_updates(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([RULE], embedder=axis)
    matcher.upsert([Rule(id="r", condition_text="zzz", examples=["refund", "refund"])])
    _, vector, found = _best(matcher, MatchConfig(example_centroid_weight=0.3))
    assert found == pytest.approx(1.0)
    assert vector == pytest.approx(1.0)
    matcher.upsert([Rule(id="r", condition_text="refund")])
    assert _best(matcher, MatchConfig(example_centroid_weight=0.3))[2] is None


def test_centroid_weight_is_bounded() -> None:
    with pytest.raises(InvalidInputError, match="example_centroid_weight"):
        MatchConfig(example_centroid_weight=1.5)
