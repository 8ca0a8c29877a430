"""``judge`` checks evaluated with a real Judge over HTTP to the loopback fake server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from norma.checks import NO_LLM, CheckStatus, evaluate_checks
from norma.errors import InvalidInputError
from norma.llm import Judge, JudgeCache, OllamaClient, RetryPolicy
from norma.rules import Rule
from tests._llm_server import FakeLLMServer

FAST = RetryPolicy(max_retries=1, backoff_base=0.01, backoff_max=0.02)
SKIPPED = "the judge could not decide, so the check is skipped, never passed: "


def reply(passed: bool, score: float, reason: str) -> str:
    return json.dumps({"pass": passed, "score": score, "reason": reason})


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


def judge_of(server: FakeLLMServer, cache: JudgeCache | None = None) -> Judge:
    return Judge(OllamaClient(server.url, "llama3.2", retry=FAST), cache=cache)


def rule_with(*checks: dict[str, object], action_text: str = "refuse to give the PIN") -> Rule:
    return Rule(id="pin", condition_text="asks for a PIN", action_text=action_text, checks=list(checks))


def test_without_a_judge_a_judge_check_is_skipped_never_passed() -> None:
    rule = rule_with({"id": "j", "kind": "judge"})
    (result,) = evaluate_checks(rule, "Your PIN is 1234.", matched=True, message="my PIN?", judge=None)
    assert (result.status, result.message) == (CheckStatus.SKIP, NO_LLM)


def test_a_passing_verdict_passes_with_score_reason_and_the_votes(server: FakeLLMServer) -> None:
    server.reply(reply(True, 0.9, "It refuses and explains why."))
    rule = rule_with({"id": "j", "kind": "judge"})
    (result,) = evaluate_checks(rule, "I cannot share PINs.", matched=True, judge=judge_of(server))
    assert result.status is CheckStatus.PASS
    assert result.message == "judge llama3.2 says pass, score 0.90 (1 vote): It refuses and explains why."
    assert result.evidence == ()
    assert len(server.requests) == 1


def test_the_criterion_defaults_to_the_action_text_and_the_message_is_given(server: FakeLLMServer) -> None:
    server.reply(reply(False, 0.1, "gives the PIN"))
    rule = rule_with({"id": "j", "kind": "judge"})
    (result,) = evaluate_checks(rule, "PIN: 1234", matched=True, message="what is my PIN?", judge=judge_of(server))
    assert result.status is CheckStatus.FAIL
    assert result.message == "judge llama3.2 says fail, score 0.10 (1 vote): gives the PIN"
    user = server.requests[0].messages[1]["content"]
    assert "\nrefuse to give the PIN\n</criterion-" in user
    assert "\nwhat is my PIN?\n</user-message-" in user
    assert "\nPIN: 1234\n</judged-text-" in user


def test_the_checks_own_criterion_wins(server: FakeLLMServer) -> None:
    server.reply(reply(True, 1.0, "polite"))
    rule = rule_with({"id": "j", "kind": "judge", "criterion": "the answer is polite"})
    evaluate_checks(rule, "Sorry, I cannot.", matched=True, judge=judge_of(server))
    user = server.requests[0].messages[1]["content"]
    assert "\nthe answer is polite\n</criterion-" in user
    assert "refuse to give the PIN" not in user


def test_votes_make_one_call_each_and_the_spread_is_in_the_message(server: FakeLLMServer) -> None:
    server.reply(reply(True, 0.9, "refuses")).reply(reply(False, 0.2, "hints")).reply(reply(True, 0.7, "ok"))
    rule = rule_with({"id": "j", "kind": "judge", "votes": 3})
    (result,) = evaluate_checks(rule, "No.", matched=True, judge=judge_of(server))
    assert len(server.requests) == 3
    assert result.status is CheckStatus.PASS
    assert result.message == (
        "judge llama3.2 says pass, score 0.60 (votes 2 for, 1 against, scores 0.20-0.90): refuses"
    )


def test_a_cached_rerun_makes_no_call_and_gives_identical_results(server: FakeLLMServer) -> None:
    server.reply(reply(False, 0.0, "a")).reply(reply(False, 0.3, "b")).reply(reply(True, 0.6, "c"))
    server.reply(reply(True, 0.8, "polite"))
    rule = rule_with(
        {"id": "j3", "kind": "judge", "votes": 3},
        {"id": "j1", "kind": "judge", "criterion": "polite"},
        {"id": "short", "kind": "max_words", "limit": 3},
    )
    judge = judge_of(server, JudgeCache())
    first = evaluate_checks(rule, "PIN is 1234, sorry", matched=True, message="PIN?", judge=judge)
    second = evaluate_checks(rule, "PIN is 1234, sorry", matched=True, message="PIN?", judge=judge)
    assert len(server.requests) == 4  # 3 votes + 1 vote, then nothing
    assert second == first
    assert [r.status for r in first] == [CheckStatus.FAIL, CheckStatus.PASS, CheckStatus.FAIL]


def test_an_invalid_reply_skips_the_check_never_passes_it(server: FakeLLMServer) -> None:
    server.reply('{"pass": true, "score": 2, "reason": "great"}')
    rule = rule_with({"id": "j", "kind": "judge"})
    (result,) = evaluate_checks(rule, "PIN: 1234", matched=True, judge=judge_of(server))
    assert result.status is CheckStatus.SKIP
    assert result.message.startswith(SKIPPED + "model llama3.2: the judge's reply is not a verdict: 'score' is 2")


def test_an_llm_that_is_down_skips_the_check(server: FakeLLMServer) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    judge = Judge(OllamaClient(f"http://127.0.0.1:{port}", "llama3.2", retry=FAST))
    rule = rule_with({"id": "j", "kind": "judge"})
    (result,) = evaluate_checks(rule, "text", matched=True, judge=judge)
    assert result.status is CheckStatus.SKIP
    assert result.message.startswith(SKIPPED)
    assert "connection failed" in result.message


def test_a_check_that_does_not_apply_asks_nothing(server: FakeLLMServer) -> None:
    rule = rule_with({"id": "j", "kind": "judge"}, {"id": "always", "kind": "judge", "when": "always"})
    server.reply(reply(True, 1.0, "fine"))
    results = evaluate_checks(rule, "text", matched=False, judge=judge_of(server))
    assert [r.check_id for r in results] == ["always"]
    assert len(server.requests) == 1


def test_other_kinds_give_the_same_results_with_or_without_a_judge(server: FakeLLMServer) -> None:
    rule = rule_with(
        {"id": "no-pin", "kind": "not_regex", "pattern": "[0-9]{4}"},
        {"id": "refuses", "kind": "contains", "terms": ["cannot"]},
    )
    output = "I cannot, but 1234 is it."
    assert evaluate_checks(rule, output, matched=True, judge=judge_of(server)) == evaluate_checks(
        rule, output, matched=True
    )
    assert server.requests == []


def test_a_message_that_is_not_text_is_refused(server: FakeLLMServer) -> None:
    rule = rule_with({"id": "j", "kind": "judge"})
    with pytest.raises(InvalidInputError, match="the user's message must be valid Unicode text"):
        evaluate_checks(rule, "text", matched=True, message="bad \ud800", judge=judge_of(server))
    assert server.requests == []
