"""The ADR pool (``candidate_pool="vector"``) under a similarity gate: a rule outside the vector top has no vector
score, so similarity 0 for the gate, and its dropped-rule detail says so (hand-computed with the axis embedder)."""

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


def adr(threshold: float, on: str = "similarity", top: int = 1) -> MatchConfig:
    return MatchConfig.adr(max_candidates=top, max_matched=10, threshold=threshold, threshold_on=on)


def test_rules_outside_the_vector_top_fail_a_similarity_gate(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    # only the vector top (a-refund, 1.0) has a similarity; the three others count as 0 < 0.5
    matches = matcher.match("refund", config=adr(0.5))
    assert [m.rule.id for m in matches] == ["a-refund"]
    assert matches[0].similarity_score == pytest.approx(1.0)
    # a vector top of 4 scores them all: 0.7071 >= 0.5
    wide = matcher.match("refund", config=adr(0.5, top=4))
    assert sorted(m.rule.id for m in wide) == [r.id for r in RULES]
    assert sorted(m.similarity_score for m in wide) == pytest.approx([HALF] * 3 + [1.0])


def test_the_detail_of_an_outside_rule_names_the_vector_top(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    result = matcher.match("refund", config=adr(0.5), explain=True)
    assert [m.rule.id for m in result] == ["a-refund"]
    # the explanation lists max_candidates scored rules: the first by final score among the three outside
    (dropped,) = [d for d in result.dropped if d.reason == "threshold"]
    assert dropped.rule_id in {r.id for r in RULES[1:]}
    assert dropped.detail == (
        "outside the vector top of 1 (candidate_pool='vector'; similarity <= 1.0000): no vector score, similarity 0 "
        "< threshold 0.5"
    )


def test_a_rule_inside_the_vector_top_is_dropped_on_its_similarity(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    result = matcher.match("refund", config=adr(0.8, top=4), explain=True)
    assert [m.rule.id for m in result] == ["a-refund"]
    details = {d.detail for d in result.dropped if d.reason == "threshold"}
    assert details == {"similarity 0.7071 < threshold 0.8"}


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
        "outside the vector top of 1 (candidate_pool='vector'; similarity <= 1.0000): no vector score, similarity 0 "
        "< threshold 1.5"
    )
    # on the final score (the ADR's own gate) the detail names the final score it failed on
    final = matcher.match("refund", config=adr(1.5, "final").with_(priority_weight=1.0), explain=True)
    (dropped,) = final.dropped
    assert dropped.rule_id == "z-refund-card"
    assert dropped.detail.startswith("final ")
    assert dropped.detail.endswith(" < threshold 1.5")
