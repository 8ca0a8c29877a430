"""Size limits on what users send the matcher and the store: refused with a typed error before any work."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from norma.errors import InvalidInputError, LimitExceededError
from norma.matching import MatchConfig, Rule, RuleMatcher
from norma.rules import MAX_RULE_TEXT_CHARS
from norma.store import MAX_RULEBOOK_RULES, RulebookError, load_rulebook
from tests.matching.conftest import AxisEmbedder


def _matcher(axis: AxisEmbedder) -> RuleMatcher:
    return RuleMatcher([Rule(id="refund", condition_text="customer wants a refund")], embedder=axis)


def test_a_message_over_the_limit_is_refused_before_embedding(axis: AxisEmbedder) -> None:
    matcher = _matcher(axis)
    calls_before = len(axis.calls)
    too_long = "refund " * (MatchConfig().max_message_chars // 7 + 1)
    with pytest.raises(LimitExceededError, match="over the limit of 100,000") as caught:
        matcher.match(too_long)
    assert caught.value.location is None  # one message: no index to name
    assert len(axis.calls) == calls_before


def test_the_message_limit_is_configurable(axis: AxisEmbedder) -> None:
    matcher = _matcher(axis)
    small = MatchConfig(max_message_chars=20)
    assert [m.rule.id for m in matcher.match("refund please", config=small)] == ["refund"]
    with pytest.raises(LimitExceededError, match="message 1 is 21 characters"):
        matcher.match_many(["refund", "r" * 21], config=small)


def test_rule_texts_and_lists_are_bounded() -> None:
    long_text = "x" * (MAX_RULE_TEXT_CHARS + 1)
    with pytest.raises(InvalidInputError, match="condition_text"):
        Rule(id="r", condition_text=long_text)
    with pytest.raises(InvalidInputError, match="action_text"):
        Rule(id="r", condition_text="c", action_text=long_text)
    with pytest.raises(InvalidInputError, match="example 0 is 10,001 characters"):
        Rule(id="r", condition_text="c", examples=[long_text])
    with pytest.raises(InvalidInputError, match="examples"):
        Rule(id="r", condition_text="c", examples=[f"example {i}" for i in range(201)])
    with pytest.raises(InvalidInputError, match="tag 0"):
        Rule(id="r", condition_text="c", tags=["t" * 201])
    assert Rule(id="r", condition_text="x" * MAX_RULE_TEXT_CHARS).condition_text == "x" * MAX_RULE_TEXT_CHARS


def test_a_rulebook_with_too_many_rules_is_refused(tmp_path: Path) -> None:
    rules = [{"id": f"r{i}", "condition_text": f"condition {i}"} for i in range(5)]
    assert len(load_rulebook(rules, tenant_id="t", max_rules=5).rules) == 5
    with pytest.raises(LimitExceededError, match="6 rules, over the limit of 5"):
        load_rulebook([*rules, {"id": "r5", "condition_text": "c"}], tenant_id="t", max_rules=5)
    assert MAX_RULEBOOK_RULES == 200_000


def test_a_rulebook_file_over_the_byte_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump({"tenant": "t", "rules": [{"id": "a", "condition_text": "c" * 5000}]}))
    assert load_rulebook(path).rules[0].id == "a"
    with pytest.raises(LimitExceededError, match="over the limit of 1,000") as caught:
        load_rulebook(path, max_bytes=1000)
    assert caught.value.source == str(path)
    broken = tmp_path / "broken.yaml"
    broken.write_text("rules: [" + "x" * 2000)  # not YAML: the size check comes first
    with pytest.raises(LimitExceededError):
        load_rulebook(broken, max_bytes=1000)
    with pytest.raises(RulebookError, match="condition_text"):
        load_rulebook([{"id": "a"}], tenant_id="t", max_rules=1)
