"""Both backends against the loopback fake server: request shape, retries, fallbacks, timeouts, secrets."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Any

import pytest

from norma.errors import BackendError, InvalidInputError
from norma.llm import ChatClient, LLMBackendError, LLMClient, OllamaClient, OpenAIClient, RetryPolicy
from tests._llm_server import FakeLLMServer
from tests.llm.conftest import FAST

SECRET = "sk-test-0123456789abcdef"


def ollama(server: FakeLLMServer, **kwargs: Any) -> OllamaClient:
    kwargs.setdefault("retry", FAST)
    return OllamaClient(server.url, kwargs.pop("model", "llama3.2"), **kwargs)


def openai(server: FakeLLMServer, **kwargs: Any) -> OpenAIClient:
    kwargs.setdefault("retry", FAST)
    return OpenAIClient(server.openai_url, kwargs.pop("model", "gpt-test"), **kwargs)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_both_clients_follow_the_protocol(llm_server: FakeLLMServer) -> None:
    assert isinstance(ollama(llm_server), LLMClient)
    assert isinstance(openai(llm_server), LLMClient)


def test_ollama_request_and_reply(llm_server: FakeLLMServer) -> None:
    llm_server.reply("Bonjour")
    client = ollama(llm_server)
    assert client.complete("Say hello in French", temperature=0.3, max_tokens=12, seed=7).text == "Bonjour"
    request = llm_server.requests[-1]
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert request.body == {
        "model": "llama3.2",
        "messages": [{"role": "user", "content": "Say hello in French"}],
        "stream": False,
        "options": {"temperature": 0.3, "seed": 7, "num_predict": 12},
    }
    assert "authorization" not in request.headers
    assert request.headers["content-type"] == "application/json"


def test_openai_request_carries_the_bearer_key(llm_server: FakeLLMServer) -> None:
    llm_server.api_key = SECRET
    llm_server.reply("hi there")
    client = openai(llm_server, api_key=SECRET)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert client.complete(messages, seed=1).text == "hi there"
    request = llm_server.requests[-1]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert request.body == {
        "model": "gpt-test",
        "messages": messages,
        "temperature": 0.0,
        "stream": False,
        "seed": 1,
    }


def test_chat_reports_model_latency_and_attempts(llm_server: FakeLLMServer) -> None:
    llm_server.reply("ok", model="llama3.2:latest")
    reply = ollama(llm_server).complete("ping")
    assert reply.text == "ok"
    assert reply.model == "llama3.2:latest"
    assert reply.attempts == 1
    assert reply.endpoint == f"{llm_server.url}/api/chat"
    assert 0 < reply.latency_s < 5


def test_think_block_and_blanks_are_removed(llm_server: FakeLLMServer) -> None:
    llm_server.reply("<think>\nlet me see\n</think>\n\n  The answer.  ")
    assert ollama(llm_server).complete("q").text == "The answer."


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retryable_statuses_are_retried(llm_server: FakeLLMServer, status: int) -> None:
    llm_server.error(status, times=2).reply("finally")
    reply = openai(llm_server).complete("q")
    assert (reply.text, reply.attempts) == ("finally", 3)
    assert len(llm_server.requests) == 3


def test_retry_after_is_honoured(llm_server: FakeLLMServer) -> None:
    llm_server.error(429, retry_after=0.3).reply("ok")
    assert ollama(llm_server).complete("q").text == "ok"
    first, second = llm_server.requests
    assert second.at - first.at >= 0.28


def test_retry_after_as_an_http_date_is_understood(llm_server: FakeLLMServer) -> None:
    llm_server.error(503, retry_after="Wed, 21 Oct 2015 07:28:00 GMT").reply("ok")
    assert ollama(llm_server).complete("q").text == "ok"


def test_retry_after_beyond_the_limit_gives_up_on_the_model(llm_server: FakeLLMServer) -> None:
    llm_server.error(429, retry_after=3600)
    with pytest.raises(LLMBackendError, match="Retry-After 3600 s is too long") as info:
        ollama(llm_server).complete("q")
    assert info.value.status == 429
    assert len(llm_server.requests) == 1


def test_gives_up_with_endpoint_and_status(llm_server: FakeLLMServer) -> None:
    llm_server.error(503, times=10, message="overloaded")
    client = openai(llm_server, api_key=SECRET)
    with pytest.raises(BackendError) as info:
        client.complete("q")
    error = info.value
    assert isinstance(error, LLMBackendError)
    assert error.status == 503
    assert error.attempts == FAST.max_retries + 1
    assert error.endpoint == f"{llm_server.url}/v1/chat/completions"
    assert f"{llm_server.url}/v1/chat/completions" in str(error)
    assert "HTTP 503" in str(error)
    assert "overloaded" in str(error)
    assert SECRET not in str(error)
    assert SECRET not in repr(error)
    assert len(llm_server.requests) == FAST.max_retries + 1


def test_no_retries_means_one_attempt(llm_server: FakeLLMServer) -> None:
    llm_server.error(500, times=3)
    with pytest.raises(LLMBackendError):
        ollama(llm_server, retry=RetryPolicy(max_retries=0)).complete("q")
    assert len(llm_server.requests) == 1


def test_unknown_model_falls_back_to_the_next(llm_server: FakeLLMServer) -> None:
    llm_server.models = {"qwen2.5:3b"}
    client = ollama(llm_server, model="llama3.2", fallback_models=["qwen2.5:3b"])
    reply = client.complete("q")
    assert reply.model == "qwen2.5:3b"
    assert [r.model for r in llm_server.requests] == ["llama3.2", "qwen2.5:3b"]


def test_exhausted_retries_fall_back_to_the_next_model(llm_server: FakeLLMServer) -> None:
    llm_server.error(503, times=FAST.max_retries + 1).reply("from b")
    reply = openai(llm_server, model="a", fallback_models=["b"]).complete("q")
    assert (reply.text, reply.model) == ("from b", "b")
    assert [r.model for r in llm_server.requests] == ["a"] * (FAST.max_retries + 1) + ["b"]


def test_every_model_missing_names_each(llm_server: FakeLLMServer) -> None:
    llm_server.models = set()
    with pytest.raises(LLMBackendError, match=r"model 'a': HTTP 404.*model 'b': HTTP 404") as info:
        ollama(llm_server, model="a", fallback_models=["b"]).complete("q")
    assert info.value.status == 404
    assert "not found" in str(info.value)


def test_bad_key_gives_up_at_once_without_leaking_it(llm_server: FakeLLMServer) -> None:
    llm_server.api_key = "the-right-key"
    with pytest.raises(LLMBackendError, match="HTTP 401") as info:
        openai(llm_server, api_key=SECRET, fallback_models=["other"]).complete("q")
    assert info.value.status == 401
    assert "NORMA_LLM_API_KEY" in str(info.value)
    assert SECRET not in str(info.value)
    assert len(llm_server.requests) == 1


def test_server_message_echoing_the_key_is_scrubbed(llm_server: FakeLLMServer) -> None:
    llm_server.error(400, message=f"bad request from key {SECRET}")
    with pytest.raises(LLMBackendError, match="HTTP 400") as info:
        openai(llm_server, api_key=SECRET).complete("q")
    assert SECRET not in str(info.value)
    assert "bad request from key <api key>" in str(info.value)
    assert info.value.fault is not None
    assert SECRET not in repr(info.value.fault)
    assert len(llm_server.requests) == 1


def test_not_a_chat_reply_is_a_backend_error(llm_server: FakeLLMServer) -> None:
    llm_server.raw(b"<html>proxy login</html>", content_type="text/html")
    with pytest.raises(LLMBackendError, match="not a chat reply"):
        ollama(llm_server).complete("q")
    llm_server.raw(b'{"choices": []}')
    with pytest.raises(LLMBackendError, match="not a chat reply"):
        openai(llm_server).complete("q")


def test_dropped_connection_is_retried(llm_server: FakeLLMServer) -> None:
    llm_server.drop().reply("second try")
    reply = ollama(llm_server).complete("q")
    assert (reply.text, reply.attempts) == ("second try", 2)


def test_refused_connection_gives_up_after_retries() -> None:
    port = closed_port()
    client = OllamaClient(f"http://127.0.0.1:{port}", "m", fallback_models=["n"], retry=FAST)
    with pytest.raises(LLMBackendError, match="connection failed") as info:
        client.complete("q")
    assert info.value.status is None
    assert info.value.attempts == FAST.max_retries + 1
    assert f"127.0.0.1:{port}" in str(info.value)


def test_read_timeout_moves_to_the_next_model(llm_server: FakeLLMServer) -> None:
    llm_server.slow(2.0).reply("quick")
    client = ollama(llm_server, model="big", fallback_models=["small"], read_timeout=0.2)
    started = time.perf_counter()
    reply = client.complete("q")
    assert (reply.text, reply.model) == ("quick", "small")
    assert time.perf_counter() - started < 1.5


def test_read_timeout_on_the_last_model_is_reported(llm_server: FakeLLMServer) -> None:
    llm_server.slow(2.0)
    with pytest.raises(LLMBackendError, match="read timeout"):
        ollama(llm_server, read_timeout=0.2).complete("q")
    assert len(llm_server.requests) == 1


def test_retries_are_logged_without_the_key(llm_server: FakeLLMServer, caplog: pytest.LogCaptureFixture) -> None:
    llm_server.error(503).reply("ok")
    with caplog.at_level(logging.DEBUG, logger="norma"):
        assert openai(llm_server, api_key=SECRET).complete(f"prompt mentioning {SECRET}").text == "ok"
    assert any("HTTP 503" in record.getMessage() for record in caplog.records)
    assert all(SECRET not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    "prompt",
    ["", "   ", [], [{"role": "robot", "content": "x"}], [{"role": "user", "content": 3}], ["hi"], {"a": "b"}],
)
def test_bad_prompts_are_rejected_before_any_request(llm_server: FakeLLMServer, prompt: Any) -> None:
    with pytest.raises(InvalidInputError):
        ollama(llm_server).complete(prompt)
    assert llm_server.requests == []


def test_async_complete(llm_server: FakeLLMServer) -> None:
    llm_server.error(500).reply("async ok")

    async def run() -> list[str]:
        client = openai(llm_server, api_key=SECRET)
        first = await client.acomplete("q1")
        second = await client.acomplete([{"role": "user", "content": "q2"}])
        return [first.text, second.text]

    assert asyncio.run(run()) == ["async ok", "ok"]
    assert [r.headers["authorization"] for r in llm_server.requests] == [f"Bearer {SECRET}"] * 3


def test_async_gives_up_like_sync(llm_server: FakeLLMServer) -> None:
    llm_server.error(502, times=10)
    with pytest.raises(LLMBackendError, match="HTTP 502") as info:
        asyncio.run(ollama(llm_server).acomplete("q"))
    assert info.value.attempts == FAST.max_retries + 1


def test_async_calls_run_concurrently(llm_server: FakeLLMServer) -> None:
    llm_server.slow(0.3, "a").slow(0.3, "b").slow(0.3, "c")
    client: ChatClient = ollama(llm_server)

    async def run() -> list[str]:
        return [reply.text for reply in await asyncio.gather(*(client.acomplete(f"q{i}") for i in range(3)))]

    started = time.perf_counter()
    assert sorted(asyncio.run(run())) == ["a", "b", "c"]
    assert time.perf_counter() - started < 0.8


def test_client_can_be_closed_and_reused(llm_server: FakeLLMServer) -> None:
    with ollama(llm_server) as client:
        assert client.complete("q").text == "ok"
    assert client.complete("q").text == "ok"
    client.close()


def test_timeout_from_the_environment_applies(llm_server: FakeLLMServer) -> None:
    from norma.llm import get_llm

    env = {"NORMA_LLM_URL": llm_server.ollama_url, "NORMA_LLM_MODEL": "m", "NORMA_LLM_TIMEOUT": "0.2"}
    client = get_llm(environ=env, retry=FAST)
    assert client is not None
    llm_server.slow(2.0)
    started = time.perf_counter()
    with pytest.raises(LLMBackendError, match="read timeout"):
        client.complete("q")
    assert time.perf_counter() - started < 1.5
