"""The chat model protocol from outside: the typed reply, streamed replies (OpenAI's server-sent events and Ollama's
lines, sync and async), a relayed request, and pooled connections shared by two clients — against real servers on
loopback (tests/service/_chat_upstream.py speaks OpenAI over keep-alive connections, tests/_llm_server.py both)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from norma.llm import ChatDelta, HttpPool, LLMBackendError, OllamaClient, OpenAIClient, RetryPolicy, Usage
from tests._llm_server import FakeLLMServer
from tests.service._chat_upstream import ChatUpstream

ONCE = RetryPolicy(max_retries=0)


@pytest.fixture
def upstream() -> Iterator[ChatUpstream]:
    with ChatUpstream() as up:
        yield up


def test_the_reply_is_typed_text_content_usage_finish_and_raw(upstream: ChatUpstream) -> None:
    upstream.reply("  <think>hm</think> Forty-two.  ")
    reply = OpenAIClient(upstream.url, "gpt-test").complete("q")
    assert reply.text == "Forty-two."
    assert reply.content == "  <think>hm</think> Forty-two.  "  # as the server sent it: what a gateway relays
    assert reply.finish_reason == "stop"
    assert reply.usage == Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15)
    assert reply.raw is not None
    assert reply.raw["system_fingerprint"] == "fp-upstream"
    assert (reply.model, reply.attempts) == ("gpt-test", 1)


def test_a_relayed_request_is_sent_as_its_client_wrote_it(upstream: ChatUpstream) -> None:
    messages = [{"role": "user", "content": "hi", "name": "ana"}]
    request = {"model": "gpt-4o-mini", "top_p": 0.5, "user": "u-1"}
    reply = OpenAIClient(upstream.url, "unused").complete(messages, request=request)
    assert upstream.requests[0].body == {"model": "gpt-4o-mini", "top_p": 0.5, "user": "u-1", "messages": messages}
    assert reply.model == "gpt-4o-mini"


def test_an_openai_stream_comes_in_deltas_sync_and_async(upstream: ChatUpstream) -> None:
    client = OpenAIClient(upstream.url, "gpt-test")
    upstream.reply("one two three")
    deltas = list(client.stream("q"))
    assert "".join(d.text for d in deltas) == "one two three"
    assert all(e["object"] == "chat.completion.chunk" for d in deltas for e in d.events)
    assert upstream.requests[0].body["stream"] is True

    async def collect() -> list[ChatDelta]:
        return [delta async for delta in client.astream("q")]

    upstream.reply("four five")
    assert "".join(d.text for d in asyncio.run(collect())) == "four five"


@pytest.mark.parametrize("way", ["sync", "async"])
def test_a_stream_cut_before_its_end_is_a_fault_after_the_events_it_gave(upstream: ChatUpstream, way: str) -> None:
    client = OpenAIClient(upstream.url, "gpt-test")
    upstream.reply("one two three", cut=True)
    got: list[str] = []

    async def collect() -> None:
        async for delta in client.astream("q"):
            got.append(delta.text)

    def read() -> None:
        if way == "sync":
            got.extend(delta.text for delta in client.stream("q"))
        else:
            asyncio.run(collect())

    with pytest.raises(LLMBackendError) as caught:
        read()
    assert got == ["one"]
    assert caught.value.gateway_status == 502
    assert caught.value.gateway_detail == "the connection to the upstream failed (RemoteProtocolError)"
    assert caught.value.gateway_retry_after == 1.0


def test_an_ollama_stream_is_read_line_by_line(llm_server: FakeLLMServer) -> None:
    lines = [
        {"model": "llama3.2", "message": {"role": "assistant", "content": "Bon"}, "done": False},
        {"model": "llama3.2", "message": {"role": "assistant", "content": "jour"}, "done": False},
        {"model": "llama3.2", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ]
    llm_server.raw(b"".join(json.dumps(line).encode() + b"\n" for line in lines), content_type="application/x-ndjson")
    deltas = list(OllamaClient(llm_server.url, "llama3.2", retry=ONCE).stream("q"))
    assert "".join(d.text for d in deltas) == "Bonjour"
    assert deltas[-1].events[-1]["done"] is True
    assert llm_server.requests[0].body["stream"] is True


def test_a_stream_that_ends_without_its_end_mark_is_a_fault(upstream: ChatUpstream) -> None:
    event = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "half"}}]}
    upstream.pieces(b"data: " + json.dumps(event).encode() + b"\n\n")
    got: list[str] = []
    with pytest.raises(LLMBackendError) as caught:
        got.extend(delta.text for delta in OpenAIClient(upstream.url, "gpt-test").stream("q"))
    assert got == ["half"]
    assert caught.value.gateway_detail == "the upstream's stream ended without [DONE]"


def test_a_reply_that_does_not_stream_is_a_fault(llm_server: FakeLLMServer) -> None:
    llm_server.raw(b'{"message": {"content": "whole"}}', content_type="application/json")
    with pytest.raises(LLMBackendError) as caught:
        list(OllamaClient(llm_server.url, "llama3.2", retry=ONCE).stream("q"))
    assert caught.value.gateway_detail == "the upstream did not stream (content type 'application/json')"


def test_two_clients_given_one_pool_share_its_connections(upstream: ChatUpstream) -> None:
    async def ask(pool: HttpPool | None) -> None:
        judge = OpenAIClient(upstream.url, "judge-model", http=pool)
        relay = OpenAIClient(upstream.url, "(the request's)", http=pool)
        for _ in range(3):
            await judge.acomplete("q")
            await relay.acomplete([{"role": "user", "content": "q"}], request={"model": "gpt-test"})
        if pool is not None:
            await pool.aclose()

    asyncio.run(ask(HttpPool()))
    assert upstream.connections == 1  # six requests over one kept-alive connection
    asyncio.run(ask(None))
    assert upstream.connections == 1 + 6  # without a pool: one connection per call, closed after it


def test_a_streamed_line_without_end_is_a_fault_not_memory_without_bound(upstream: ChatUpstream) -> None:
    """A server that streams more than MAX_STREAM_LINE characters without a line break: the reading stops there,
    with a fault that says so (not the "not JSON" of a line read whole at the end)."""
    from norma.llm._http import MAX_STREAM_LINE

    first = b'data: {"choices": [{"index": 0, "delta": {"content": "one"}}]}\n\n'
    endless = b"data: " + b"x" * (64 * 1024)
    upstream.pieces(first, *[endless] * (MAX_STREAM_LINE // (64 * 1024) + 2), gap=0.0)
    got: list[str] = []
    with pytest.raises(LLMBackendError) as caught:
        got.extend(delta.text for delta in OpenAIClient(upstream.url, "gpt-test").stream("q"))
    assert got == ["one"]
    assert caught.value.gateway_detail == f"the upstream streamed a line longer than {MAX_STREAM_LINE:,} characters"
    assert caught.value.gateway_status == 502
