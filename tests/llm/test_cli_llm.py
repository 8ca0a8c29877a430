"""``norma llm check`` and ``norma rules examples`` against the loopback fake server."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from norma.llm import ChatDelta, LLMClient, Prompt, ping_llm
from norma.matching import Rule
from norma.store import open_store
from tests._llm_server import FakeLLMServer

SECRET = "sk-cli-secret-42"


def test_check_prints_model_and_latency(run_cli: Callable[..., Any], llm_server: FakeLLMServer) -> None:
    llm_server.reply("ok", model="llama3.2:latest")
    result = run_cli("llm", "check", "--url", llm_server.url, "--model", "llama3.2", "--kind", "ollama")
    assert result.code == 0, result.err
    assert "llama3.2:latest" in result.out
    assert " ms" in result.out
    assert llm_server.requests[-1].body["options"]["num_predict"] == 16


def test_check_json(run_cli: Callable[..., Any], llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_LLM_URL", llm_server.openai_url)
    monkeypatch.setenv("NORMA_LLM_MODEL", "gpt-test")
    monkeypatch.setenv("NORMA_LLM_API_KEY", SECRET)
    llm_server.reply("pong")
    result = run_cli("llm", "check", "--prompt", "ping", "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["ok"] is True
    assert payload["model"] == "gpt-test"
    assert payload["reply"] == "pong"
    assert payload["endpoint"] == f"{llm_server.url}/v1/chat/completions"
    assert payload["latency_ms"] > 0
    assert llm_server.requests[-1].messages == [{"role": "user", "content": "ping"}]
    assert llm_server.requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in result.out + result.err


def test_check_failure_exits_1_without_the_key(
    run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, llm_server: FakeLLMServer
) -> None:
    monkeypatch.setenv("NORMA_LLM_API_KEY", SECRET)
    llm_server.api_key = "another-key"
    result = run_cli("llm", "check", "--url", llm_server.openai_url, "--model", "m", "--format", "json")
    assert result.code == 1
    payload = json.loads(result.out)
    assert payload["ok"] is False
    assert "HTTP 401" in payload["error"]
    assert SECRET not in result.out + result.err


def test_check_unreachable_exits_1(run_cli: Callable[..., Any]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = run_cli("llm", "check", "--url", f"http://127.0.0.1:{port}", "--model", "m", "--kind", "ollama")
    assert result.code == 1
    assert "connection failed" in result.out
    assert f"127.0.0.1:{port}" in result.out


def test_check_without_configuration_exits_2(run_cli: Callable[..., Any]) -> None:
    result = run_cli("llm", "check")
    assert result.code == 2
    assert "NORMA_LLM_URL" in result.err


def test_check_llm_accepts_any_client() -> None:
    class Echo:
        model = "echo"

        def complete(
            self,
            prompt_or_messages: Prompt,
            *,
            temperature: float = 0.0,
            max_tokens: int | None = None,
            seed: int | None = None,
        ) -> str:
            return str(prompt_or_messages).upper()

        async def acomplete(
            self,
            prompt_or_messages: Prompt,
            *,
            temperature: float = 0.0,
            max_tokens: int | None = None,
            seed: int | None = None,
        ) -> str:
            return self.complete(prompt_or_messages)

        def stream(self, prompt_or_messages: Prompt, **options: Any) -> Iterator[ChatDelta]:
            yield ChatDelta((), self.complete(prompt_or_messages))

        async def astream(self, prompt_or_messages: Prompt, **options: Any) -> AsyncIterator[ChatDelta]:
            yield ChatDelta((), self.complete(prompt_or_messages))

    assert isinstance(Echo(), LLMClient)  # a client written before ChatReply: its complete returns the text

    result = ping_llm(Echo(), "hi")
    assert (result.model, result.reply, result.endpoint, result.attempts) == ("echo", "HI", "", 1)


def test_rules_examples(run_cli: Callable[..., Any], llm_server: FakeLLMServer, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/norma.db"
    store = open_store(db)
    store.upsert_rules("acme", [Rule(id="refund", condition_text="customer asks for a refund")])
    store.close()
    llm_server.reply('["I want my money back", "refund please"]')
    args = ["rules", "examples", "--tenant", "acme", "--db", db, "--url", llm_server.url, "--model", "m"]
    result = run_cli(*args, "-n", "2", "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["updated"] == {"refund": ["I want my money back", "refund please"]}
    store = open_store(db)
    assert store.get_rule("acme", "refund").examples == ("I want my money back", "refund please")
    store.close()
    again = run_cli(*args)
    assert again.code == 0
    assert "skipped" in again.out
    assert "refund" in again.out
    assert len(llm_server.requests) == 1


def test_rules_examples_failing_llm_exits_2(
    run_cli: Callable[..., Any], llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/norma.db"
    store = open_store(db)
    store.upsert_rules("acme", [Rule(id="refund", condition_text="customer asks for a refund")])
    store.close()
    llm_server.error(404, times=5, message='model "m" not found')
    result = run_cli("rules", "examples", "--tenant", "acme", "--db", db, "--url", llm_server.url, "--model", "m")
    assert result.code == 2
    assert "HTTP 404" in result.err
    assert "not found" in result.err


def test_names_query_llm_uses_the_configured_model(
    run_cli: Callable[..., Any], llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NORMA_LLM_URL", llm_server.url)
    monkeypatch.setenv("NORMA_LLM_MODEL", "phraser")
    monkeypatch.setenv("NORMA_LLM_KIND", "ollama")
    llm_server.reply("Write variations of {name} as the labels say.")
    result = run_cli("names", "query", "--seed", "7", "--name", "Anna Bell", "--llm", "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["phrased_by"] == "phraser"
    assert payload["template"].startswith("Write variations of {name} as the labels say.\n[VALIDATION HINTS]: ")
    assert payload["text"].startswith("Write variations of Anna Bell as the labels say.")
    plain = json.loads(run_cli("names", "query", "--seed", "7", "--format", "json").out)
    assert plain["phrased_by"] is None
    assert plain["labels"] == payload["labels"]


def test_names_query_llm_without_configuration_exits_2(run_cli: Callable[..., Any]) -> None:
    result = run_cli("names", "query", "--llm")
    assert result.code == 2
    assert "NORMA_LLM_URL" in result.err
