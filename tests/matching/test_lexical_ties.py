"""A word every rule shares with the same BM25 score must not send every rule to exact scoring (found by the store
benchmark: 10k synthetic rules, one message in ten took 100+ ms instead of 8)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import norma.matching._pipeline as pipeline
from norma.matching import MatchConfig, Rule, RuleMatcher
from tests.matching.conftest import AxisEmbedder

# 2,000 rules "customer topic-N" (same length, so "customer" has the same BM25 in each) plus one refund rule.
RULES = [Rule(id=f"t{i:05d}", condition_text=f"customer topic{i}") for i in range(2000)]
RULES.append(Rule(id="refund", condition_text="customer wants a refund"))


def test_tied_lexical_hits_are_cut_at_max_candidates(axis: AxisEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []
    real = pipeline.rescore

    def spy(matcher: RuleMatcher, slots: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        sizes.append(len(slots))
        return real(matcher, slots, query)

    monkeypatch.setattr(pipeline, "rescore", spy)
    matcher = RuleMatcher(RULES, MatchConfig(threshold=None), embedder=axis)
    result = matcher.match("customer")
    assert max(sizes) <= 2 * matcher.config.max_candidates + 10
    assert len(result) == matcher.config.max_matched


def test_the_cut_among_ties_is_by_rule_id_whatever_the_insertion_order(axis: AxisEmbedder) -> None:
    config = MatchConfig(threshold=None, candidate_pool="hybrid")
    first = RuleMatcher(RULES, config, embedder=axis).match("customer refund")
    shuffled = RULES[:]
    random.Random(5).shuffle(shuffled)
    second = RuleMatcher(shuffled, config, embedder=axis).match("customer refund")
    assert [m.rule.id for m in first] == [m.rule.id for m in second]
    assert [m.final_score for m in first] == [m.final_score for m in second]
    assert first[0].rule.id == "refund"
