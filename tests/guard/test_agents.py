"""norma in the OpenAI Agents SDK: a real ``Agent`` run by the SDK's ``Runner``, its model an
``OpenAIChatCompletionsModel`` over ``AsyncOpenAI`` pointed at a scripted OpenAI-compatible server on a loopback port
(tests/_llm_server.py), so every request the SDK makes is real HTTP and every answer is known.

Each outcome is worked out by hand from the rulebook below: "I want a refund for my order" matches ``refund`` (its
``policy`` check wants "refund policy"); ``no-cards`` applies to every answer (``when: always``); "can I sue your
company" matches ``lawsuit``, tagged ``block``, which stops the turn before the model runs.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents", reason="the OpenAI Agents SDK is not installed (pip install 'norma-rules[agents]')")

from agents import (
    Agent,
    InputGuardrailTripwireTriggered,
    OpenAIChatCompletionsModel,
    OutputGuardrailTripwireTriggered,
    RunContextWrapper,
    Runner,
    set_tracing_disabled,
)
from openai import AsyncOpenAI
from pydantic import BaseModel

import norma
from norma.errors import InvalidInputError, MissingDependencyError
from norma.guard import Guard, agent_guardrails
from norma.guard._agents import AgentGuardrails
from tests._llm_server import FakeLLMServer
from tests._rulebooks import NO_CARDS, REFUND, WEATHER, rulebook

pytestmark = pytest.mark.model

REPO = Path(__file__).resolve().parents[2]

LAWSUIT = """\
  - id: lawsuit
    condition_text: customer threatens to sue the company or asks for legal advice
    action_text: hand the conversation to the legal team
    tags: [block]
    examples: ["can I sue your company", "I will take you to court"]
"""
RULEBOOK = rulebook(REFUND, WEATHER, LAWSUIT, NO_CARDS)

BASE = "You are Acme's assistant."
REFUND = "I want a refund for my order"
GOOD = "Our refund policy applies: fill in form REF-1234."
BAD = "Fill in form REF-1234."
RULES_BLOCK = (
    "Follow these rules in your answer (rule ids in brackets):\n"
    "1. [refund] explain the refund policy and give the form reference\n"
    "2. [no-cards] if customer shares payment details: never repeat a card number"
)


@pytest.fixture(scope="module", autouse=True)
def _no_tracing_export() -> Iterator[None]:
    set_tracing_disabled(True)  # the SDK would export traces to OpenAI
    yield
    set_tracing_disabled(False)


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> norma.Norma:
    path: Path = tmp_path_factory.mktemp("agents") / "rules.yaml"
    path.write_text(RULEBOOK, encoding="utf-8")
    return norma.open(path, judge=None)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def _run(
    rails: AgentGuardrails, server: FakeLLMServer, given: str | list[Any], context: Any = None, output_type: Any = None
) -> Any:
    """Run a real agent guarded by ``rails`` on ``given``, its model the scripted server (the client closed after)."""

    async def run() -> Any:
        async with AsyncOpenAI(base_url=server.openai_url, api_key="test-key", max_retries=0) as client:
            agent: Agent[Any] = Agent(
                name="support",
                instructions=rails.instructions,
                model=OpenAIChatCompletionsModel(model="m", openai_client=client),
                input_guardrails=[rails.input],
                output_guardrails=[rails.output],
                output_type=output_type,
            )
            return await Runner.run(agent, given, context=context)

    return asyncio.run(run())


def test_the_instructions_carry_the_rules_and_a_passing_answer_returns(
    rules: norma.Norma, server: FakeLLMServer
) -> None:
    server.reply(GOOD)
    result = _run(agent_guardrails(rules, instructions=BASE), server, REFUND)
    assert result.final_output == GOOD
    sent = server.requests[-1].messages
    assert sent[0] == {"role": "system", "content": f"{BASE}\n\n{RULES_BLOCK}"}
    assert sent[-1] == {"role": "user", "content": REFUND}
    assert len(server.requests) == 1
    [checked] = result.output_guardrail_results
    assert checked.output.tripwire_triggered is False
    info = checked.output.output_info
    assert info["passed"] is True
    assert info["report"]["verdict"] == "pass"
    assert [(r["rule_id"], r["why"]) for r in info["rules"]] == [("refund", "matched"), ("no-cards", "always")]
    [screened] = result.input_guardrail_results
    assert (screened.output.tripwire_triggered, screened.output.output_info) == (False, {"rules": []})


def test_a_failing_answer_trips_the_output_guardrail_with_the_report(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(BAD)
    with pytest.raises(OutputGuardrailTripwireTriggered) as caught:
        _run(agent_guardrails(rules, instructions=BASE), server, REFUND)
    tripped = caught.value.guardrail_result
    assert tripped.guardrail.get_name() == "norma_output"
    assert tripped.agent_output == BAD
    info = tripped.output.output_info
    assert info["passed"] is False
    assert info["fail_on"] == "error"
    assert info["report"]["verdict"] == "fail"
    failed = [
        (rule["rule_id"], check["check_id"])
        for rule in info["report"]["rules"]
        for check in rule["checks"]
        if check["status"] == "fail"
    ]
    assert failed == [("refund", "policy")]


def test_an_always_check_fails_an_answer_to_any_message(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply("Sure, your card 4111 1111 1111 1111 is on file.")
    with pytest.raises(OutputGuardrailTripwireTriggered) as caught:
        _run(agent_guardrails(rules), server, "will it rain tomorrow")
    sent = server.requests[-1].messages
    assert sent[0]["role"] == "system"
    assert sent[0]["content"] == (
        "Follow these rules in your answer (rule ids in brackets):\n"
        "1. [weather] say you cannot forecast the weather\n"
        "2. [no-cards] if customer shares payment details: never repeat a card number"
    )
    info = caught.value.guardrail_result.output.output_info
    assert [r["rule_id"] for r in info["report"]["rules"] if r["verdict"] == "fail"] == ["no-cards"]


def test_a_rule_tagged_block_stops_the_turn_before_any_model_request(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(GOOD)
    with pytest.raises(InputGuardrailTripwireTriggered) as caught:
        _run(agent_guardrails(rules, instructions=BASE), server, "can I sue your company over this")
    assert server.requests == []
    assert server.pending == 1
    tripped = caught.value.guardrail_result
    assert tripped.guardrail.get_name() == "norma_input"
    assert tripped.output.output_info == {
        "rules": [
            {
                "rule_id": "lawsuit",
                "text": "hand the conversation to the legal team",
                "why": "matched",
                "tags": ["block"],
            }
        ]
    }


class Reply(BaseModel):
    text: str
    form: str


def test_a_structured_output_is_checked_as_its_json(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply('{"text": "Our refund policy applies.", "form": "REF-1234"}')
    result = _run(agent_guardrails(rules), server, REFUND, output_type=Reply)
    assert result.final_output == Reply(text="Our refund policy applies.", form="REF-1234")
    server.reply('{"text": "Fill it in.", "form": "REF-1234"}')
    with pytest.raises(OutputGuardrailTripwireTriggered) as caught:
        _run(agent_guardrails(rules), server, REFUND, output_type=Reply)
    info = caught.value.guardrail_result.output.output_info
    assert [r["rule_id"] for r in info["report"]["rules"] if r["verdict"] == "fail"] == ["refund"]


def test_block_tags_are_configurable(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply("Our legal team will contact you.")
    result = _run(agent_guardrails(rules, block_tags=["stop"]), server, "can I sue your company over this")
    assert result.final_output == "Our legal team will contact you."
    assert "1. [lawsuit] hand the conversation to the legal team" in server.requests[-1].messages[0]["content"]


def test_the_rules_follow_the_last_user_message_of_a_conversation(rules: norma.Norma, server: FakeLLMServer) -> None:
    server.reply(GOOD)
    conversation = [
        {"role": "user", "content": "will it rain tomorrow"},
        {"role": "assistant", "content": "I cannot forecast the weather."},
        {"role": "user", "content": [{"type": "input_text", "text": REFUND}]},
    ]
    result = _run(agent_guardrails(rules, instructions=BASE), server, conversation)
    assert result.final_output == GOOD
    assert server.requests[-1].messages[0] == {"role": "system", "content": f"{BASE}\n\n{RULES_BLOCK}"}


def test_instructions_from_a_function_and_a_guard_with_its_own_template(
    rules: norma.Norma, server: FakeLLMServer
) -> None:
    seen: list[str] = []

    async def base(context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        seen.append(agent.name)
        return f"You help {context.context['customer']}."

    server.reply(GOOD)
    guard = Guard(rules, template="RULES:\n{rules}\nEND")
    _run(agent_guardrails(guard, instructions=base), server, REFUND, context={"customer": "Ada"})
    assert seen == ["support"]
    assert server.requests[-1].messages[0]["content"] == (
        "You help Ada.\n\nRULES:\n1. [refund] explain the refund policy and give the form reference\n"
        "2. [no-cards] if customer shares payment details: never repeat a card number\nEND"
    )


def test_fail_on_warning_trips_on_a_failed_warning_check(tmp_path: Path, server: FakeLLMServer) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "format: norma.rulebook/v1\nrules:\n"
        "  - id: polite\n    condition_text: any message\n    action_text: say thank you\n"
        "    checks:\n      - {id: thanks, kind: contains, terms: [thank], severity: warning, when: always}\n",
        encoding="utf-8",
    )
    server.reply("Done.", times=2)
    result = _run(agent_guardrails(path), server, "hello")
    assert result.final_output == "Done."  # a failed warning check does not fail the answer under fail_on=error
    with pytest.raises(OutputGuardrailTripwireTriggered):
        _run(agent_guardrails(path, fail_on="warning"), server, "hello")


def test_bad_options_are_typed_errors(rules: norma.Norma) -> None:
    with pytest.raises(InvalidInputError, match="block_tags"):
        agent_guardrails(rules, block_tags="block")
    with pytest.raises(InvalidInputError, match="instructions"):
        agent_guardrails(rules, instructions=42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="template"):
        agent_guardrails(rules, template="no placeholder")


def test_without_the_sdk_a_clear_error_names_the_extra(rules: norma.Norma, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)  # what Python does for a package that is not installed
    with pytest.raises(MissingDependencyError) as caught:
        agent_guardrails(rules)
    assert caught.value.extra == "agents"
    assert "pip install 'norma-rules[agents]'" in str(caught.value)


def _doc_blocks(language: str) -> list[str]:
    """The ``language`` code blocks of the page that shows the Agents SDK example (docs/guard-agents.md, or
    docs/guard.md once it holds the example)."""
    for name in ("guard-agents.md", "guard.md"):
        path = REPO / "docs" / name
        if path.is_file() and "agent_guardrails(" in path.read_text(encoding="utf-8"):
            return re.findall(rf"^```{language}\n(.*?)^```$", path.read_text(encoding="utf-8"), re.M | re.S)
    raise AssertionError("no page of docs/ shows agent_guardrails")


@pytest.mark.slow  # a Python process that loads the model and the SDK
def test_the_documented_example_runs_as_shown(server: FakeLLMServer) -> None:
    [script] = [block for block in _doc_blocks("python") if "Runner.run(" in block]
    passing = "Your complaint is logged under reference CMP-20931; we answer within eight weeks."
    server.reply(passing).reply("I have logged your complaint, reference CMP-20932.")
    environment = {
        **os.environ,
        "OPENAI_BASE_URL": server.openai_url,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
        "PYTHONPATH": str(REPO / "src"),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=environment, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        passing,
        "[blocked: complaint/gives-deadline] Sorry, I can't answer that here.",
        "[handed over: fraud-suspected] A colleague will take it from here.",
    ]
    assert len(server.requests) == 2  # the fraud message never reached the model
    [shown] = [block for block in _doc_blocks("text") if block.startswith("You are Northwind Bank's support")]
    assert server.requests[0].messages[0] == {"role": "system", "content": shown.rstrip("\n")}


def test_a_run_is_matched_once_and_forgotten_after(rules: norma.Norma, server: FakeLLMServer) -> None:
    sessions: list[Any] = []

    def session(context: RunContextWrapper[Any]) -> None:
        sessions.append(context.context)  # asked once for each match
        return None

    rails = agent_guardrails(rules, session=session)
    server.reply(GOOD)
    _run(rails, server, REFUND, context="run-1")
    assert sessions == ["run-1"]  # the input guardrail, the instructions and the output guardrail share one match
    gc.collect()
    assert len(rails._runs) == 0  # the run's context is gone, and its match with it
