"""The matcher with the real all-MiniLM-L6-v2 embedder."""

from __future__ import annotations

import pytest

from norma.matching import MatchConfig, RuleMatcher, SessionState, load_rules
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def matcher() -> RuleMatcher:
    return RuleMatcher(load_rules(EXAMPLES / "matching" / "support_rules.yaml"))


def test_paraphrases_match_their_rule(matcher: RuleMatcher) -> None:
    assert matcher.match("can I have my money back?")[0].rule.id == "refund-request"
    assert matcher.match("somebody stole my bank card")[0].rule.id == "lost-card"
    assert matcher.match("my parcel never arrived", SessionState(active_scenario_id="delivery"))[0].rule.id == (
        "delivery-missing"
    )


def test_unrelated_message_matches_nothing(matcher: RuleMatcher) -> None:
    assert matcher.match("what is the capital of France?") == []


def test_matched_example_is_named(matcher: RuleMatcher) -> None:
    (best, *_) = matcher.match("my card was stolen yesterday")
    assert best.explanation.matched_example == 1
    assert best.explanation.matched_text == "my card was stolen"


def test_long_message_is_chunked_not_truncated(matcher: RuleMatcher) -> None:
    filler = "The weather was fine and we talked about gardens, books and trains for a while. " * 40
    message = filler + "Anyway, someone stole my card and I need it blocked."
    assert matcher.embedder.token_counts([message])[0] == 256  # type: ignore[attr-defined]
    chunked = matcher.match(message, config=MatchConfig(threshold=0.3))
    assert "lost-card" in [m.rule.id for m in chunked]
    truncated = matcher.match(message, config=MatchConfig(threshold=0.3, long_messages="truncate"))
    assert "lost-card" not in [m.rule.id for m in truncated]


def test_match_many_equals_match(matcher: RuleMatcher) -> None:
    messages = ["hello!", "you are useless", "refund please", ""]
    assert matcher.match_many(messages) == [matcher.match(m) for m in messages]
