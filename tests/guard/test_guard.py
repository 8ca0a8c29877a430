"""norma.guard: the rules that govern a turn go into the prompt; the answer is checked, then repaired, blocked or
flagged.

The model is a scripted OpenAI-compatible server on a loopback port (tests/_llm_server.py) whose answers are known,
so each outcome is worked out by hand from the rulebook below: an answer without "refund policy" fails the
``policy`` check of the refund rule; one with a card number fails the always-on ``no-card`` check.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import norma
from norma.errors import InvalidInputError
from norma.guard import Guard, GuardAction, GuardPolicy, GuardResult
from norma.llm import OpenAIClient, RetryPolicy
from norma.rules import Verdict
from tests._llm_server import FakeLLMServer
from tests._rulebooks import NO_CARDS, REFUND, WEATHER, rulebook

pytestmark = pytest.mark.model

RULEBOOK = rulebook(REFUND, WEATHER, NO_CARDS)

GOOD = "Our refund policy applies: fill in form REF-1234."
BAD = "Fill in form REF-1234."
ASK = [{"role": "user", "content": "I want a refund for my order"}]
FAST = RetryPolicy(max_retries=0)


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> norma.Norma:
    path: Path = tmp_path_factory.mktemp("guard") / "rules.yaml"
    path.write_text(RULEBOOK, encoding="utf-8")
    return norma.open(path, judge=None)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _guard(rules: norma.Norma, server: FakeLLMServer, **options: object) -> Guard:
    return Guard(rules, OpenAIClient(server.openai_url, "m", retry=FAST), **options)  # type: ignore[arg-type]


def test_the_rules_that_govern_the_turn_go_into_the_system_message(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(GOOD)
    result = _guard(rules, server).run([{"role": "system", "content": "You are Acme's assistant."}, *ASK])
    assert [(r.rule_id, r.why) for r in result.rules] == [("refund", "matched"), ("no-cards", "always")]
    sent = server.requests[-1].messages
    assert sent[0]["role"] == "system"
    assert sent[0]["content"] == (
        "You are Acme's assistant.\n\n"
        "Follow these rules in your answer (rule ids in brackets):\n"
        "1. [refund] explain the refund policy and give the form reference\n"
        "2. [no-cards] if customer shares payment details: never repeat a card number"
    )
    assert sent[1:] == ASK
    assert (result.passed, result.action, result.answer) == (True, "passed", GOOD)
    assert result.report.verdict is Verdict.PASS
    assert len(result.attempts) == 1


def test_a_replaceable_template_and_a_new_system_message(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(GOOD)
    _guard(rules, server, template="RULES:\n{rules}\nEND").run(ASK)
    sent = server.requests[-1].messages
    assert sent[0] == {
        "role": "system",
        "content": "RULES:\n1. [refund] explain the refund policy and give the form reference\n"
        "2. [no-cards] if customer shares payment details: never repeat a card number\nEND",
    }


def test_repair_asks_once_more_with_the_failed_checks_and_returns_the_passing_answer(
    rules: norma.Norma, server: FakeLLMServer
) -> None:
    server.reply(BAD).reply(GOOD)
    result = _guard(rules, server).run(ASK)
    assert len(server.requests) == 2  # one extra call exactly
    assert (result.passed, result.action, result.answer) == (True, "repaired", GOOD)
    assert [a.report.verdict for a in result.attempts] == [Verdict.FAIL, Verdict.PASS]
    repair = server.requests[1].messages
    assert repair[-2] == {"role": "assistant", "content": BAD}
    assert repair[-1]["role"] == "user"
    assert "[refund/policy]" in repair[-1]["content"]


def test_repair_never_goes_past_its_bound_and_then_blocks(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(BAD, times=5)
    result = _guard(rules, server, max_repairs=2).run(ASK)
    assert len(server.requests) == 3
    assert (result.passed, result.action) == (False, "blocked")
    assert result.answer == norma.guard.DEFAULT_FALLBACK
    assert result.report.verdict is Verdict.FAIL  # the report of the last answer, never a pass
    assert server.pending == 2


def test_block_returns_the_fallback(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(BAD)
    result = _guard(rules, server, policy="block", fallback="Sorry.").run(ASK)
    assert len(server.requests) == 1
    assert (result.passed, result.action, result.answer) == (False, "blocked", "Sorry.")


def test_flag_returns_the_failing_answer_marked_failed(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply("Your card 4111 1111 1111 1111 is refunded under our refund policy.")
    result = _guard(rules, server, policy=GuardPolicy.FLAG).run(ASK)
    assert (result.passed, result.action) == (False, "flagged")
    assert result.answer.startswith("Your card 4111")
    assert [(f.rule_id, f.check_id) for f in result.report.failures] == [("no-cards", "no-card")]
    data = result.to_dict()
    assert data["passed"] is False
    assert data["report"]["verdict"] == "fail"
    assert [a["verdict"] for a in data["attempts"]] == ["fail"]


def test_the_norma_field_leaves_out_every_answer_and_follows_its_generated_schema(
    rules: norma.Norma, server: FakeLLMServer
) -> None:
    server.reply("Your card 4111 1111 1111 1111 is refunded.").reply("Your card 4111 1111 1111 1111 again.")
    result = _guard(rules, server).run(ASK)  # repair, then blocked: two failing answers
    assert result.action is GuardAction.BLOCKED
    data = result.to_dict(answers=False)
    assert "4111" not in json.dumps(data)  # neither the turn's answer nor an attempt's
    assert list(data) == [
        "passed", "action", "policy", "rules", "prepare_ms", "total_ms", "report", "attempts", "guard_ms"
    ]  # fmt: skip
    assert [list(a) for a in data["attempts"]] == [["verdict", "model_ms", "check_ms"]] * 2
    model = GuardResult.json_model("Turn")
    assert list(model.model_json_schema()["properties"]) == list(data)
    model.model_validate(data)  # the schema takes what the endpoint sends
    with pytest.raises(ValueError, match="answer"):
        model.model_validate({**data, "answer": result.answer})
    assert result.to_dict()["answer"] == result.answer  # the library's own dict keeps it


def test_async_run_gives_what_run_gives(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(BAD).reply(GOOD)
    result = asyncio.run(_guard(rules, server).arun(ASK))
    assert (result.passed, result.action, len(server.requests)) == (True, "repaired", 2)


def test_timings_are_split_between_the_model_and_the_guard(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(GOOD, delay=0.2)
    result = _guard(rules, server).run(ASK)
    assert result.attempts[0].model_ms >= 200
    assert result.total_ms >= result.attempts[0].model_ms
    assert 0 <= result.guard_ms < result.total_ms


def test_an_off_topic_message_injects_only_the_always_rules(rules: norma.Norma) -> None:
    prepared = Guard(rules).prepare([{"role": "user", "content": "what is the capital of Peru"}])
    assert [r.rule_id for r in prepared.rules] == ["no-cards"]


@pytest.mark.parametrize(
    ("messages", "location"),
    [
        ([], "messages"),
        ("hello", "messages"),
        ([{"role": "assistant", "content": "hi"}], "messages"),
        ([{"role": "user", "content": [{"type": "text"}]}], "messages[0].content"),
        ([{"content": "hi"}], "messages[0]"),
    ],
)
def test_bad_conversations_are_refused(rules: norma.Norma, messages: object, location: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        Guard(rules).prepare(messages)  # type: ignore[arg-type]
    assert caught.value.location == location


@pytest.mark.parametrize(
    ("options", "location"),
    [
        ({"policy": "retry"}, "policy"),
        ({"max_repairs": 6}, "max_repairs"),
        ({"max_repairs": -1}, "max_repairs"),
        ({"template": "no placeholder"}, "template"),
        ({"template": "{rules} {other}"}, "template"),
        ({"fallback": " "}, "fallback"),
    ],
)
def test_bad_options_are_refused(rules: norma.Norma, options: dict[str, object], location: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        Guard(rules, **options)  # type: ignore[arg-type]
    assert caught.value.location == location


def test_a_guard_without_a_model_says_so(rules: norma.Norma) -> None:
    with pytest.raises(InvalidInputError, match="no chat model"):
        Guard(rules).run(ASK)


def test_a_guard_result_reads_as_its_action_rules_and_verdict(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(GOOD)
    passed = _guard(rules, server).run(ASK)
    assert repr(passed) == (
        "<GuardResult passed after 1 attempt; rules refund, no-cards; pass, reward 1.000 (2 passed, 0 failed, "
        "0 skipped)>"
    )
    assert str(passed) == repr(passed)
    server.reply(BAD).reply(GOOD)
    assert repr(_guard(rules, server).run(ASK)) == (
        "<GuardResult repaired after 2 attempts; rules refund, no-cards; pass, reward 1.000 (2 passed, 0 failed, "
        "0 skipped)>"
    )
    server.reply(BAD, times=2)
    assert repr(_guard(rules, server).run(ASK)) == (
        "<GuardResult blocked after 2 attempts; rules refund, no-cards; fail, reward 0.500 (1 passed, 1 failed, "
        "0 skipped), failed refund/policy>"
    )
    server.reply("No idea.")
    off_topic = _guard(rules, server, policy="flag").run([{"role": "user", "content": "what is the capital of Peru"}])
    assert repr(off_topic) == (
        "<GuardResult passed after 1 attempt; rules no-cards; pass, reward 1.000 (1 passed, 0 failed, 0 skipped)>"
    )


def test_a_blank_user_message_matches_nothing_and_is_still_guarded(rules: norma.Norma) -> None:
    # norma.open's match refuses an empty message; a conversation may still end on one (the always rules apply)
    with pytest.raises(InvalidInputError, match="the message is empty"):
        rules.match("  ")
    prepared = Guard(rules).prepare([{"role": "user", "content": "  "}])
    assert (list(prepared.match), [r.rule_id for r in prepared.rules]) == ([], ["no-cards"])
    report = Guard(rules).review(prepared, "Your card 4111 1111 1111 1111.")
    assert [(f.rule_id, f.check_id) for f in report.failures] == [("no-cards", "no-card")]
    with pytest.raises(InvalidInputError, match="invalid session"):
        Guard(rules).prepare([{"role": "user", "content": ""}], {"turn": -1})
