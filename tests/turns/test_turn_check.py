"""The turn check: rules that apply, their checks on the output, each rule's verdict, the turn's verdict and reward.

Rules are built here with the real embedding model; verdicts and rewards are worked out by hand from the checks.
"""

from __future__ import annotations

import pytest

from norma.checks import CheckStatus
from norma.errors import InvalidInputError
from norma.rubrics import evaluate_outcome_against_rubric
from norma.rules import Rule
from norma.turns import Norma, TurnVerdict, rule_verdict, turn_reward
from norma.turns import open as open_rules

pytestmark = pytest.mark.model

REFUND = Rule(
    id="refund",
    tenant_id="acme",
    condition_text="customer asks for a refund of an order",
    action_text="explain the refund policy and give the form reference",
    examples=("I want my money back", "can I get a refund for my order"),
    checks=(
        {"id": "policy", "kind": "contains", "terms": ["refund policy"]},
        {"id": "reference", "kind": "regex", "pattern": "REF-[0-9]{4}", "weight": 3},
        {"id": "short", "kind": "max_words", "limit": 40, "severity": "warning"},
    ),
)
CARDS = Rule(
    id="card-safety",
    tenant_id="acme",
    condition_text="customer talks about the opening hours of the branches",
    examples=("when are you open", "opening hours on saturday"),
    checks=({"id": "no-card", "kind": "no_pii", "kinds": ["card"], "when": "always", "weight": 2},),
)
WEATHER = Rule(
    id="weather",
    tenant_id="acme",
    condition_text="customer asks about the weather forecast",
    examples=("will it rain tomorrow",),
)


@pytest.fixture(scope="module")
def checker() -> Norma:
    return open_rules([REFUND, CARDS, WEATHER], judge=None)


def test_a_good_answer_passes_every_check_with_reward_one(checker: Norma) -> None:
    report = checker.check("I want a refund for my order", "Our refund policy applies: fill in form REF-1234.")
    assert report.verdict is TurnVerdict.PASS
    assert next(m.rule_id for m in report.matches) == "refund"
    assert [(r.rule_id, r.matched, r.verdict) for r in report.rules] == [
        ("refund", True, CheckStatus.PASS),
        ("card-safety", False, CheckStatus.PASS),
    ]
    assert report.reward == 1.0
    assert report.counts == {"pass": 4, "fail": 0, "skip": 0}


def test_an_error_check_failing_fails_the_turn_and_weighs_in_the_reward(checker: Norma) -> None:
    # refund: policy passes (1), reference fails (3), short passes (1): score 2/5 = 0.4, weight 5, required;
    # card-safety (always): fails (weight 2): score 0. Reward = (0.4 x 5 + 0 x 2) / 7 = 2/7.
    output = "Our refund policy applies. Your card 4111 1111 1111 1111 will be credited."
    report = checker.check("can I get a refund for my order", output)
    assert report.verdict is TurnVerdict.FAIL
    refund, cards = report.rules
    assert refund.score == pytest.approx(0.4)
    assert (refund.weight, refund.required, refund.verdict) == (5.0, True, CheckStatus.FAIL)
    assert (cards.score, cards.weight, cards.matched) == (0.0, 2.0, False)
    assert report.reward == pytest.approx(2 / 7)
    [card_failure] = [f for f in report.failures if f.check_id == "no-card"]
    [span] = card_failure.evidence
    assert (span.line, span.column, span.text) == (1, 38, "**** **** **** 1111")  # 37 characters before it


def test_the_reward_is_the_rubric_arithmetic(checker: Norma) -> None:
    report = checker.check("can I get a refund for my order", "Nothing to say.")
    rubric_reward = evaluate_outcome_against_rubric(report.outcome, report.rubric)["reward"]
    assert report.reward == pytest.approx(rubric_reward)
    assert {c.id: (c.weight, c.required) for c in report.rubric.criteria} == {
        "refund": (5.0, True),
        "card-safety": (2.0, True),
    }


def test_a_warning_failure_does_not_fail_the_turn_unless_asked(checker: Norma) -> None:
    output = "Our refund policy applies: form REF-1234. " + "word " * 60
    report = checker.check("I want a refund for my order", output)
    assert report.verdict is TurnVerdict.PASS
    assert [f.check_id for f in report.failures] == ["short"]
    assert not report.failing("error")
    assert report.failing("warning")


def test_no_rule_with_checks_applies_only_always_checks_run(checker: Norma) -> None:
    report = checker.check("will it rain tomorrow", "Probably, take an umbrella.")
    assert [r.rule_id for r in report.rules] == ["card-safety"]
    assert report.verdict is TurnVerdict.PASS


def test_nothing_decided_is_skip_with_no_reward() -> None:
    report = open_rules([WEATHER], judge=None).check("will it rain tomorrow", "Sunny.")
    assert report.verdict is TurnVerdict.SKIP
    assert report.reward is None
    assert report.rules == ()


def test_rule_verdict_and_reward_by_hand() -> None:
    judge_rule = Rule(
        id="tone",
        condition_text="x",
        action_text="be polite",
        checks=({"id": "polite", "kind": "judge"}, {"id": "short", "kind": "max_chars", "limit": 5}),
    )
    from norma.checks import evaluate_checks

    checked = rule_verdict(judge_rule, evaluate_checks(judge_rule, "abc", matched=True), matched=True)
    assert checked.verdict is CheckStatus.PASS  # the judge skipped (no LLM), the length passed
    assert checked.score == 1.0
    assert checked.weight == 2.0  # the weights of the checks that applied
    all_skipped = rule_verdict(judge_rule, evaluate_checks(judge_rule, "abc", matched=True)[:1], matched=True)
    assert (all_skipped.verdict, all_skipped.score) == (CheckStatus.SKIP, None)
    assert turn_reward([all_skipped]) is None
    assert turn_reward([checked, all_skipped]) == 1.0


def test_bad_output_is_a_typed_error(checker: Norma) -> None:
    with pytest.raises(InvalidInputError, match="must be text"):
        checker.check("hello", 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError) as reviewed:
        checker.review("I want a refund", 42, checker.match("I want a refund"))  # type: ignore[arg-type]
    assert (reviewed.value.message, reviewed.value.location) == ("the output to check must be text, not int", "output")
    with pytest.raises(InvalidInputError, match="takes a list of turns") as many:
        checker.check_many("I want a refund")  # type: ignore[arg-type]
    assert many.value.location == "turns"
    with pytest.raises(InvalidInputError, match="rules must be"):
        open_rules(42, judge=None)  # type: ignore[arg-type]


def test_an_empty_message_is_a_typed_error_in_every_way_in(checker: Norma) -> None:
    with pytest.raises(InvalidInputError) as one:
        checker.check(" ", "Our refund policy applies.")
    assert (one.value.message, one.value.location) == ("the message is empty", "message")
    with pytest.raises(InvalidInputError) as many:
        checker.check_many([("I want a refund", "ok"), {"message": "", "output": "ok"}])
    assert (many.value.message, many.value.location) == ("the message is empty", "turns[1].message")
    with pytest.raises(InvalidInputError) as matched:
        checker.match("")
    assert (matched.value.message, matched.value.location) == ("the message is empty", "message")


def test_the_report_is_json_ready_and_sessions_count(checker: Norma) -> None:
    report = checker.check("I want a refund", "refund policy REF-0001", {"turn": 3})
    data = report.to_dict()
    assert data["verdict"] == "pass"
    assert data["counts"]["pass"] == 4
    assert data["rules"][0]["checks"][0]["check_id"] == "policy"
    assert data["audit"] is None
    with pytest.raises(InvalidInputError):
        checker.check("I want a refund", "x", {"turn": -1})


def test_the_audit_joins_when_asked(checker: Norma) -> None:
    report = checker.check("I want a refund for my order", "Our refund policy applies: form REF-1234.", audit=True)
    assert report.audit is not None
    assert report.audit.model_dump(mode="json")["result"] in ("PASS", "FAIL", "SKIP")
    assert report.to_dict()["audit"]["result"] == report.audit.result.value.upper()


def test_an_undecided_error_check_makes_the_turn_skip_never_pass() -> None:
    rule = Rule(
        id="tone",
        condition_text="customer asks for a refund of an order",
        action_text="be polite",
        examples=("I want my money back",),
        checks=({"id": "polite", "kind": "judge"}, {"id": "short", "kind": "max_chars", "limit": 500}),
    )
    report = open_rules([rule], judge=None).check("I want my money back", "Fine.")
    assert [r.status for r in report.checks] == [CheckStatus.SKIP, CheckStatus.PASS]
    assert report.verdict is TurnVerdict.SKIP
    assert report.reward == 1.0  # the decided checks all passed


def test_judge_checks_in_a_turn_call_the_model_once_per_vote_and_never_on_a_cached_rerun(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from norma.llm import Judge, JudgeCache, OllamaClient, RetryPolicy
    from tests._llm_server import FakeLLMServer

    rule = Rule(
        id="tone",
        condition_text="customer asks for a refund of an order",
        action_text="be polite",
        examples=("I want my money back",),
        checks=({"id": "polite", "kind": "judge", "votes": 3},),
    )
    verdicts = [(True, 0.9), (False, 0.2), (True, 0.7)]
    with FakeLLMServer() as server:
        for passed, score in verdicts:
            server.reply(json.dumps({"pass": passed, "score": score, "reason": "r"}))
        fast = RetryPolicy(max_retries=1, backoff_base=0.01, backoff_max=0.02)
        client = OllamaClient(server.url, "m", retry=fast)
        with JudgeCache(tmp_path / "judge.sqlite3") as cache:
            checker = open_rules([rule], judge=Judge(client, cache=cache))
            first = checker.check("I want my money back", "Here you go, with pleasure.")
            assert len(server.requests) == 3  # one call per vote
            again = open_rules([rule], judge=Judge(client, cache=cache)).check(
                "I want my money back", "Here you go, with pleasure."
            )
            assert len(server.requests) == 3  # the re-run is free
    assert first.verdict is TurnVerdict.PASS  # 2 votes of 3
    assert first.reward == 1.0
    assert again.to_dict() == first.to_dict()
    assert "2 for, 1 against" in first.checks[0].message or "2-1" in first.checks[0].message, first.checks[0].message


def test_always_checks_follow_the_matchers_rules_as_they_change() -> None:
    from norma.matching import RuleMatcher

    matcher = RuleMatcher([WEATHER])
    first, second = open_rules(matcher, judge=None), open_rules(matcher, judge=None)  # one per rules version
    assert first.check("will it rain", "Card 4111 1111 1111 1111.").rules == ()
    matcher.upsert([CARDS])
    report = second.check("will it rain", "Card 4111 1111 1111 1111.")
    assert [(r.rule_id, r.verdict) for r in report.rules] == [("card-safety", CheckStatus.FAIL)]
    matcher.remove(["card-safety"])
    assert first.check("will it rain", "Card 4111 1111 1111 1111.").rules == ()
