"""Calibrating a gate without hand labels: an LLM (a fake server on loopback) writes messages each rule should
match and near misses it must not; the expected gates are computed by hand with the axis embedder."""

from __future__ import annotations

import json
import math

import pytest

from norma.errors import InvalidInputError
from norma.llm import OpenAIClient
from norma.matching import Rule, RuleMatcher, calibrate_gate, synthesize_labelled
from norma.matching._synthetic import NearMiss, near_miss_prompt
from tests._llm_server import FakeLLMServer
from tests.llm.conftest import FAST
from tests.matching.conftest import AxisEmbedder

RULES = [Rule(id="refund", condition_text="refund"), Rule(id="card", condition_text="card")]


@pytest.fixture
def axis() -> AxisEmbedder:
    return AxisEmbedder()


def _replies(server: FakeLLMServer) -> None:
    server.reply(json.dumps(["refund please", "refund my order"]))  # refund: should match (similarity 1.0)
    server.reply(json.dumps(["weather today", "refund"]))  # refund: near misses ("refund" is its condition: dropped)
    server.reply(json.dumps(["card please", "card weather"]))  # card: 1.0 and 1/sqrt(2)
    server.reply(json.dumps(["card hello"]))  # card: a near miss at 1/sqrt(2)


def test_the_llm_writes_positives_and_near_misses(llm_server: FakeLLMServer) -> None:
    _replies(llm_server)
    llm = OpenAIClient(llm_server.openai_url, "gpt-test", retry=FAST)
    written = synthesize_labelled(RULES, llm=llm, per_rule=2)
    assert [(m.message, m.expected) for m in written.positives] == [
        ("refund please", ("refund",)),
        ("refund my order", ("refund",)),
        ("card please", ("card",)),
        ("card weather", ("card",)),
    ]
    assert written.near_misses == (NearMiss("weather today", "refund"), NearMiss("card hello", "card"))
    assert written.failed == ()
    prompts = [r.body["messages"][1]["content"] for r in llm_server.requests]
    assert "NOT a case this rule applies to" in prompts[1]
    assert prompts[1] == near_miss_prompt(RULES[0], 2)[1]["content"]


def test_near_misses_move_the_calibrated_gate(llm_server: FakeLLMServer, axis: AxisEmbedder) -> None:
    _replies(llm_server)
    written = synthesize_labelled(RULES, llm=OpenAIClient(llm_server.openai_url, "gpt-test", retry=FAST), per_rule=2)
    matcher = RuleMatcher(RULES, embedder=axis)
    # positives alone: at 1/sqrt(2) every expected rule is returned and nothing wrong above 0: precision 1
    alone = calibrate_gate(matcher, written.positives, target_precision=1.0)
    assert alone.threshold == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    # the near miss "card hello" returns card at 1/sqrt(2) too: precision 4/5 there, so the gate rises to 1.0
    gate = calibrate_gate(matcher, written.positives, target_precision=1.0, near_misses=written.near_misses)
    assert gate.threshold == pytest.approx(1.0, abs=1e-6)
    assert (gate.messages, gate.near_misses, gate.recall) == (4, 2, 0.75)
    assert (gate.to_dict()["terms"]["messages"], gate.to_dict()["terms"]["near_misses"]) == (4, 2)
    assert "and 2 near misses" in gate.description


def test_near_misses_alone_or_for_unknown_rules(axis: AxisEmbedder) -> None:
    matcher = RuleMatcher(RULES, embedder=axis)
    with pytest.raises(InvalidInputError, match="unknown rule"):
        calibrate_gate(matcher, [], near_misses=[NearMiss("hello", "ghost")])
    with pytest.raises(InvalidInputError, match="no labelled messages"):
        calibrate_gate(matcher, [], near_misses=[])


def test_per_rule_is_bounded(llm_server: FakeLLMServer) -> None:
    llm = OpenAIClient(llm_server.openai_url, "gpt-test", retry=FAST)
    with pytest.raises(InvalidInputError, match="per_rule"):
        synthesize_labelled(RULES, llm=llm, per_rule=0)
