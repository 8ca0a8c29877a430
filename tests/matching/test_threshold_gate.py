"""The default threshold gate: ``max(hybrid, similarity - similarity_slack)`` (hand-computed with the axis embedder)."""

from __future__ import annotations

import math

import pytest

from norma.matching import MatchConfig, Rule, RuleMatcher
from tests.matching.conftest import AxisEmbedder

# The rule is the "refund" axis; the message "refunding cardholder" is refund + card (no word in common with the
# rule): similarity 1/sqrt(2), BM25 0, so hybrid = 0.7 / sqrt(2) = 0.495 and similarity - 0.15 = 0.557.
RULE = Rule(id="refund", condition_text="refund")
MESSAGE = "refunding cardholder"


def test_the_default_gate_is_automatic_and_a_number_gates_hybrid_or_similarity() -> None:
    config = MatchConfig()
    assert (config.threshold, config.gate_quantile, config.gate_probes) == ("auto", None, 2048)
    assert (config.gate_band_quantile, config.gate_margin) == (0.12, 0.09)
    assert (config.threshold_on, config.similarity_slack) == ("hybrid_or_similarity", 0.15)
    assert MatchConfig.adr().threshold_on == "final"


def test_a_paraphrase_without_shared_words_passes_on_similarity(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([RULE], embedder=axis)
    similarity = 1 / math.sqrt(2)
    hybrid_only = MatchConfig(threshold=0.5, threshold_on="hybrid")
    either = MatchConfig(threshold=0.5, threshold_on="hybrid_or_similarity")
    assert matcher.match(MESSAGE, config=hybrid_only) == []  # 0.495 < 0.5
    (match,) = matcher.match(MESSAGE, config=either)
    assert match.explanation.hybrid == pytest.approx(0.7 * similarity)
    assert match.explanation.threshold_score == pytest.approx(similarity - 0.15)
    assert match.explanation.to_dict()["similarity_slack"] == 0.15
    # a larger slack closes that door again: 0.707 - 0.25 = 0.457 < 0.5
    assert matcher.match(MESSAGE, config=either.with_(similarity_slack=0.25)) == []


def test_the_gate_explains_a_dropped_rule(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher([RULE], embedder=axis)
    result = matcher.match(MESSAGE, config=MatchConfig(threshold=0.6), explain=True)
    assert result == []
    (dropped,) = result.dropped
    assert dropped.reason == "threshold"
    # every term that decided it: hybrid 0.7/sqrt(2), similarity 1/sqrt(2), the slack, and the threshold
    assert dropped.detail == ("max(hybrid 0.4950, similarity 0.7071 - slack 0.15 = 0.5571) = 0.5571 < threshold 0.6")
    assert result.gate is not None
    assert result.gate.kind == "fixed"
    assert result.gate.terms == {"source": "threshold set in the config", "similarity_slack": 0.15}


def test_similarity_gate_uses_the_reported_similarity_not_the_centroid_blend(axis: AxisEmbedder) -> None:
    rule = Rule(id="r", condition_text="zzz", examples=["refund", "refund card"])
    matcher = RuleMatcher([rule], embedder=axis)
    config = MatchConfig(threshold=0.99, threshold_on="similarity", example_centroid_weight=0.5)
    (match,) = matcher.match("refund", config=config)  # similarity 1.0 (the first example), vector score < 1
    assert match.similarity_score == pytest.approx(1.0)
    assert match.explanation.vector_score < 0.99
