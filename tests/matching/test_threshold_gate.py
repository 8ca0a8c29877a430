"""A numeric threshold gates the similarity by default, or the final score (hand-computed with the axis
embedder)."""

from __future__ import annotations

import math

import pytest

from norma.errors import InvalidInputError
from norma.matching import FixedGate, MatchConfig, Rule, RuleMatcher
from tests.matching.conftest import AxisEmbedder

# The rule is the "refund" axis; the message "refunding cardholder" is refund + card (no word in common with the
# rule): similarity 1/sqrt(2), BM25 0, so hybrid = 0.7 / sqrt(2) = 0.495.
RULE = Rule(id="refund", condition_text="refund")
MESSAGE = "refunding cardholder"


def test_the_default_gate_is_automatic_and_a_number_gates_the_similarity() -> None:
    config = MatchConfig()
    assert config.threshold == "auto"
    assert config.threshold_on == "similarity"
    assert MatchConfig.adr().threshold_on == "final"
    for removed in ("hybrid", "hybrid_or_similarity"):
        with pytest.raises(InvalidInputError, match="threshold_on"):
            MatchConfig(threshold_on=removed)
    for field in ("similarity_slack", "gate_probes", "vector_scan", "blas", "hnsw_build", "gate_quantile",
                  "gate_band_quantile", "gate_margin"):  # fmt: skip
        with pytest.raises(InvalidInputError, match=field):
            MatchConfig(**{field: 1})


def test_a_paraphrase_without_shared_words_passes_on_similarity(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([RULE], embedder=axis)
    similarity = 1 / math.sqrt(2)
    (match,) = matcher.match(MESSAGE, config=MatchConfig(threshold=0.7))  # 0.7071 >= 0.7, though hybrid is 0.495
    assert match.explanation.hybrid == pytest.approx(0.7 * similarity)
    assert match.explanation.threshold_score == pytest.approx(similarity)
    assert (match.explanation.threshold, match.explanation.threshold_on) == (0.7, "similarity")
    assert "similarity_slack" not in match.explanation.to_dict()
    assert matcher.match(MESSAGE, config=MatchConfig(threshold=0.71)) == []  # 0.7071 < 0.71


def test_the_gate_explains_a_dropped_rule(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([RULE], embedder=axis)
    result = matcher.match(MESSAGE, config=MatchConfig(threshold=0.8), explain=True)
    assert result == []
    (dropped,) = result.dropped
    assert dropped.reason == "threshold"
    assert dropped.detail == "similarity 0.7071 < threshold 0.8"
    assert result.gate == FixedGate(0.8, "similarity")
    assert result.gate.to_dict()["terms"] == {"source": "config"}
    # on the final score: 0.6 * 0.495 + 0.3 * 0 (one priority) + 0.1 * 1.0 = 0.397
    final = matcher.match(MESSAGE, config=MatchConfig(threshold=0.5, threshold_on="final"), explain=True)
    assert final == []
    assert final.dropped[0].detail == "final 0.3970 < threshold 0.5"
    assert final.gate == FixedGate(0.5, "final")


def test_similarity_gate_uses_the_reported_similarity_not_the_centroid_blend(axis: AxisEmbedder) -> None:
    rule = Rule(id="r", condition_text="zzz", examples=["refund", "refund card"])
    matcher = RuleMatcher([rule], embedder=axis)
    config = MatchConfig(threshold=0.99, threshold_on="similarity", example_centroid_weight=0.5)
    (match,) = matcher.match("refund", config=config)  # similarity 1.0 (the first example), vector score < 1
    assert match.similarity_score == pytest.approx(1.0)
    assert match.explanation.vector_score < 0.99
