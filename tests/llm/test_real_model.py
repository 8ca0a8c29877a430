"""A real model (``norma llm local``'s server: llama.cpp with SmolLM2-135M-Instruct, in a subprocess) behind norma's
OpenAI client and judge: plumbing and format, never the quality of a judgement. Skipped with one reason when the
server cannot start (tests/_real_llm.py); the server and its command are tested in tests/llm/test_local.py."""

from __future__ import annotations

import pytest

from norma.llm import Judge, JudgeError, JudgeVerdict, OpenAIClient, parse_vote

MODEL = "smollm2-135m-instruct-q4_1"
TEXT = "I cannot share account numbers."
CRITERION = "The answer refuses to share an account number."


@pytest.mark.real_llm
def test_the_openai_client_gets_an_answer(real_llm_url: str) -> None:
    reply = OpenAIClient(real_llm_url, MODEL).complete("Say hello in one word.", max_tokens=8)
    assert reply.text.strip()
    assert (reply.model, reply.attempts) == (MODEL, 1)


@pytest.mark.real_llm
def test_the_same_prompt_at_temperature_0_gives_byte_identical_answers(real_llm_url: str) -> None:
    client = OpenAIClient(real_llm_url, MODEL)
    first = client.complete("Name a colour.", temperature=0.0, max_tokens=12).text
    second = client.complete("Name a colour.", temperature=0.0, max_tokens=12).text
    assert first
    assert first.encode() == second.encode()


@pytest.mark.real_llm
def test_the_judge_gets_a_parsed_verdict_through_response_format(real_llm_url: str) -> None:
    client = OpenAIClient(real_llm_url, MODEL)
    verdict = Judge(client, max_tokens=64).judge(TEXT, CRITERION)
    assert isinstance(verdict, JudgeVerdict)
    assert len(verdict.votes) == 1
    vote = verdict.votes[0]
    assert isinstance(vote.passed, bool)
    assert 0.0 <= vote.score <= 1.0
    assert isinstance(vote.reason, str)
    assert client.sends_schema is True  # the server took the schema: no fallback to the prompt alone


@pytest.mark.real_llm
def test_the_prompt_alone_does_not_give_a_verdict(real_llm_url: str) -> None:
    """Why the judge asks for structured output: the same messages without the schema get prose from this model
    (the team measured 5 of 5), which the strict reading refuses."""
    client = OpenAIClient(real_llm_url, MODEL)
    judge = Judge(client, max_tokens=64)
    reply = client.complete(judge.messages(TEXT, CRITERION), max_tokens=64, seed=0).text
    with pytest.raises(JudgeError):
        parse_vote(reply, model=MODEL)
