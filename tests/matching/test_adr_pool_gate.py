"""The ADR pool (``candidate_pool="vector"``) under a similarity gate: rules outside the vector top are gated on the
similarity the result reports, not on the 0 of their vector score (hand-computed with the axis embedder)."""

from __future__ import annotations

import math

import pytest

from norma.matching import MatchConfig, Rule, RuleMatcher
from tests.matching.conftest import AxisEmbedder

# "refund" is the message; every rule carries the refund axis, so their similarities are 1 and three times 1/sqrt(2).
RULES = [
    Rule(id="a-refund", condition_text="refund"),
    Rule(id="b-refund-card", condition_text="refund card"),
    Rule(id="c-refund-hello", condition_text="refund hello"),
    Rule(id="d-refund-weather", condition_text="refund weather"),
]
HALF = 1 / math.sqrt(2)


def adr(threshold: float, on: str = "similarity") -> MatchConfig:
    return MatchConfig.adr(max_candidates=1, max_matched=10, threshold=threshold, threshold_on=on)


def test_rules_outside_the_vector_top_pass_a_similarity_gate_they_reach(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    matches = matcher.match("refund", config=adr(0.5))
    # before: only the vector top passed, the three others were compared as similarity 0
    assert sorted(m.rule.id for m in matches) == [r.id for r in RULES]
    by_id = {m.rule.id: m.similarity_score for m in matches}
    assert by_id["a-refund"] == pytest.approx(1.0)
    assert [by_id[r.id] for r in RULES[1:]] == pytest.approx([HALF] * 3)


def test_a_gate_between_them_drops_the_outside_rules_on_their_similarity(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    result = matcher.match("refund", config=adr(0.8).with_(max_candidates=1), explain=True)
    assert [m.rule.id for m in result] == ["a-refund"]
    # the explanation lists max_candidates scored rules: the first by final score among the three outside
    (dropped,) = [d for d in result.dropped if d.reason == "threshold"]
    assert dropped.rule_id in {r.id for r in RULES[1:]}
    assert dropped.detail == "similarity 0.7071 < threshold 0.8"


# The rule outside the vector top ranks first among the dropped by its priority (weighted 1.0 below: final 1.1
# against 0.7), so the explanation lists it.
PRIORITY = [Rule(id="a-refund", condition_text="refund"), Rule(id="z-refund-card", condition_text="refund card",
                                                                priority=100)]  # fmt: skip


def test_an_unreachable_gate_explains_an_outside_rule_by_the_vector_top(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(PRIORITY, embedder=axis)
    result = matcher.match("refund", config=adr(1.5).with_(priority_weight=1.0), explain=True)
    assert list(result) == []
    (dropped,) = result.dropped
    assert dropped.rule_id == "z-refund-card"
    assert dropped.detail == (
        "outside the vector top of 1 (candidate_pool='vector'), similarity <= 1.0000 < threshold 1.5"
    )
    assert dropped.similarity == pytest.approx(HALF)  # its own similarity, which the detail bounds
    # on hybrid_or_similarity the detail names the hybrid score it failed on, and the bound with the slack
    config = adr(1.5, "hybrid_or_similarity").with_(priority_weight=1.0)
    (dropped,) = matcher.match("refund", config=config, explain=True).dropped
    assert dropped.detail.startswith("hybrid ")
    assert dropped.detail.endswith(
        "< threshold 1.5; outside the vector top of 1 (candidate_pool='vector'), similarity <= 1.0000 - slack 0.15: "
        "below it too"
    )


def test_hybrid_or_similarity_counts_the_outside_rules_similarity_minus_the_slack(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    # 0.7071 - 0.15 = 0.5571 >= 0.55: the outside rules pass on their similarity, their hybrid being lower
    matches = matcher.match("refund", config=adr(0.55, "hybrid_or_similarity"))
    assert len(matches) == 4
    assert all(m.explanation.threshold_score >= 0.55 for m in matches)
