"""Structured output over real HTTP to the loopback fake server: the schema in each backend's field, the judge
asking for the verdict's schema, and the fallback when a server refuses the field (asked once more without it,
remembered for the client's lifetime)."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from norma.llm import (
    VERDICT_SCHEMA,
    Judge,
    LLMBackendError,
    OllamaClient,
    OpenAIClient,
    Prompt,
    ReplySchema,
    accepts_schema,
)
from tests._llm_server import FakeLLMServer
from tests.llm.conftest import FAST

SCHEMA = ReplySchema(
    "answer",
    {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    },
)
SCHEMA_JSON = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
VERDICT = '{"pass": true, "score": 0.8, "reason": "polite"}'


def openai(server: FakeLLMServer) -> OpenAIClient:
    return OpenAIClient(server.openai_url, "m", retry=FAST)


def test_openai_sends_the_schema_as_a_strict_json_schema_response_format(llm_server: FakeLLMServer) -> None:
    llm_server.reply('{"answer": "yes"}')
    assert openai(llm_server).complete("q", schema=SCHEMA).text == '{"answer": "yes"}'
    assert llm_server.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA_JSON, "strict": True},
    }


def test_ollama_sends_the_schema_as_format(llm_server: FakeLLMServer) -> None:
    llm_server.reply('{"answer": "yes"}')
    OllamaClient(llm_server.url, "m", retry=FAST).complete("q", schema=SCHEMA)
    assert llm_server.requests[0].body["format"] == SCHEMA_JSON


def test_without_a_schema_the_body_is_as_before(llm_server: FakeLLMServer) -> None:
    llm_server.reply("a").reply("b")
    openai(llm_server).complete("q")
    OllamaClient(llm_server.url, "m", retry=FAST).complete("q")
    assert set(llm_server.requests[0].body) == {"model", "messages", "temperature", "stream"}
    assert set(llm_server.requests[1].body) == {"model", "messages", "stream", "options"}


def test_a_400_naming_response_format_is_asked_again_without_it_and_remembered(
    llm_server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.error(400, message="response_format of type json_schema is not supported").reply("plain").reply("2nd")
    client = openai(llm_server)
    with caplog.at_level(logging.WARNING, logger="norma.llm"):
        reply = client.complete("q", schema=SCHEMA)
    assert (reply.text, reply.attempts) == ("plain", 2)
    assert ["response_format" in request.body for request in llm_server.requests] == [True, False]
    assert client.sends_schema is False
    assert "refused response_format" in caplog.text
    assert client.complete("again", schema=SCHEMA).text == "2nd"
    assert "response_format" not in llm_server.requests[2].body
    assert len(llm_server.requests) == 3


def test_ollama_falls_back_too_on_a_400_naming_format(llm_server: FakeLLMServer) -> None:
    llm_server.error(400, message='invalid format: expected "json" or a JSON schema').reply("plain")
    client = OllamaClient(llm_server.url, "m", retry=FAST)
    assert asyncio.run(client.acomplete("q", schema=SCHEMA)).text == "plain"
    assert ["format" in request.body for request in llm_server.requests] == [True, False]
    assert client.sends_schema is False


def test_another_400_is_not_a_refusal_of_the_schema(llm_server: FakeLLMServer) -> None:
    llm_server.error(400, message="messages must not be empty")
    client = openai(llm_server)
    with pytest.raises(LLMBackendError) as caught:
        client.complete("q", schema=SCHEMA)
    assert (caught.value.status, caught.value.attempts) == (400, 1)
    assert client.sends_schema is True


def test_a_400_naming_response_format_without_a_schema_sent_is_an_error(llm_server: FakeLLMServer) -> None:
    llm_server.error(400, message="response_format is broken")
    with pytest.raises(LLMBackendError) as caught:
        openai(llm_server).complete("q")
    assert caught.value.attempts == 1


def test_the_judge_asks_for_the_verdict_schema(llm_server: FakeLLMServer) -> None:
    llm_server.reply(VERDICT)
    verdict = Judge(openai(llm_server)).judge("Thank you.", "the answer is polite")
    assert (verdict.passed, verdict.score, verdict.reason) == (True, 0.8, "polite")
    assert llm_server.requests[0].body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "norma_verdict",
            "schema": {
                "type": "object",
                "properties": {
                    "pass": {"type": "boolean"},
                    "score": {"type": "number", "minimum": 0, "maximum": 1},
                    "reason": {"type": "string"},
                },
                "required": ["pass", "score", "reason"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


def test_the_judge_asks_for_the_schema_asynchronously_and_falls_back_to_the_prompt(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.error(422, message="Unsupported parameter: 'response_format'").reply(VERDICT)
    verdict = asyncio.run(Judge(openai(llm_server)).ajudge("Thank you.", "the answer is polite"))
    assert verdict.reason == "polite"
    assert ["response_format" in request.body for request in llm_server.requests] == [True, False]


def test_a_client_without_the_schema_argument_is_judged_as_before() -> None:
    class Scripted:
        """An LLMClient written before ``schema`` existed."""

        model = "scripted"

        def __init__(self) -> None:
            self.calls: list[dict[str, object]] = []

        def complete(
            self,
            prompt_or_messages: Prompt,
            *,
            temperature: float = 0.0,
            max_tokens: int | None = None,
            seed: int | None = None,
        ) -> str:
            self.calls.append({"temperature": temperature, "max_tokens": max_tokens, "seed": seed})
            return VERDICT

        async def acomplete(
            self,
            prompt_or_messages: Prompt,
            *,
            temperature: float = 0.0,
            max_tokens: int | None = None,
            seed: int | None = None,
        ) -> str:
            return self.complete(prompt_or_messages, temperature=temperature, max_tokens=max_tokens, seed=seed)

    llm = Scripted()
    assert accepts_schema(llm) is False
    assert Judge(llm).judge("Thank you.", "polite").passed is True
    assert asyncio.run(Judge(llm).ajudge("Thank you.", "polite")).passed is True
    assert llm.calls == [{"temperature": 0.0, "max_tokens": 512, "seed": 0}] * 2


def test_accepts_schema_reads_the_signatures(llm_server: FakeLLMServer) -> None:
    class Keywords:
        model = "k"

        def complete(self, prompt_or_messages: Prompt, **options: object) -> str:
            return json.dumps(options)

        async def acomplete(self, prompt_or_messages: Prompt, **options: object) -> str:
            return json.dumps(options)

    assert accepts_schema(openai(llm_server)) is True
    assert accepts_schema(OllamaClient(llm_server.url, "m")) is True
    assert accepts_schema(Keywords()) is True
    assert accepts_schema(object()) is False
    assert VERDICT_SCHEMA.name == "norma_verdict"
