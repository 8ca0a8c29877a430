"""Settings from arguments and NORMA_LLM_*, backend detection, URL redaction, the retry policy's arithmetic."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import ConfigError
from norma.llm import LLMSettings, OllamaClient, OpenAIClient, RetryPolicy, detect_kind, get_llm, redact_url


def test_get_llm_is_none_without_a_url() -> None:
    assert get_llm(environ={}) is None
    assert get_llm(environ={"NORMA_LLM_MODEL": "llama3.2"}) is None


def test_get_llm_reads_the_environment() -> None:
    env = {
        "NORMA_LLM_URL": "http://localhost:11434",
        "NORMA_LLM_MODEL": "llama3.2, qwen2.5:3b ,",
        "NORMA_LLM_API_KEY": "k-123",
        "NORMA_LLM_TIMEOUT": "7.5",
    }
    client = get_llm(environ=env)
    assert isinstance(client, OllamaClient)
    assert client.model == "llama3.2"
    assert client.settings.models == ("llama3.2", "qwen2.5:3b")
    assert client.settings.api_key == "k-123"
    assert client.settings.read_timeout == 7.5
    assert client.endpoint == "http://localhost:11434/api/chat"


def test_arguments_win_over_the_environment() -> None:
    env = {"NORMA_LLM_URL": "http://localhost:11434", "NORMA_LLM_MODEL": "llama3.2", "NORMA_LLM_API_KEY": "env"}
    client = get_llm("https://api.example.com/v1", "gpt-x", "arg", fallback_models=["gpt-y"], environ=env)
    assert isinstance(client, OpenAIClient)
    assert (client.model, client.settings.api_key) == ("gpt-x", "arg")
    assert client.settings.models == ("gpt-x", "gpt-y")
    assert client.endpoint == "https://api.example.com/v1/chat/completions"


def test_explicit_kind_overrides_detection() -> None:
    env = {"NORMA_LLM_URL": "http://gpu-box:8080", "NORMA_LLM_MODEL": "m", "NORMA_LLM_KIND": "OLLAMA"}
    assert isinstance(get_llm(environ=env), OllamaClient)
    assert isinstance(get_llm(kind="openai", environ={**env, "NORMA_LLM_URL": "http://h:11434"}), OpenAIClient)


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://localhost:11434", "ollama"),
        ("http://localhost:11434/", "ollama"),
        ("http://proxy/ollama/api", "ollama"),
        ("http://proxy/api/chat", "ollama"),
        ("http://localhost:11434/v1", "openai"),
        ("http://localhost:8000/v1", "openai"),
        ("https://api.openai.com/v1", "openai"),
        ("https://generativelanguage.googleapis.com/v1beta/openai/", "openai"),
        ("http://localhost:1234", "openai"),
    ],
)
def test_detect_kind(url: str, kind: str) -> None:
    assert detect_kind(url) == kind


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://h:11434", "http://h:11434/api/chat"),
        ("http://h/prefix/api", "http://h/prefix/api/chat"),
        ("http://h/api/chat/", "http://h/api/chat"),
        ("http://h/prefix", "http://h/prefix/api/chat"),
    ],
)
def test_ollama_endpoint(url: str, endpoint: str) -> None:
    assert OllamaClient(url, "m").endpoint == endpoint


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("http://h:8000", "http://h:8000/v1/chat/completions"),
        ("http://h:8000/v1/", "http://h:8000/v1/chat/completions"),
        ("https://g/v1beta/openai", "https://g/v1beta/openai/chat/completions"),
        ("http://h/v1/chat/completions", "http://h/v1/chat/completions"),
    ],
)
def test_openai_endpoint(url: str, endpoint: str) -> None:
    assert OpenAIClient(url, "m").endpoint == endpoint


def test_url_without_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="NORMA_LLM_MODEL"):
        get_llm(environ={"NORMA_LLM_URL": "http://localhost:11434"})


@pytest.mark.parametrize("url", ["localhost:11434", "ftp://host/x", "http://"])
def test_bad_url_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="http"):
        get_llm(url, "m", environ={})


def test_bad_kind_and_timeout_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="kind"):
        get_llm("http://h", "m", kind="anthropic", environ={})
    with pytest.raises(ConfigError, match="NORMA_LLM_TIMEOUT"):
        get_llm(environ={"NORMA_LLM_URL": "http://h", "NORMA_LLM_MODEL": "m", "NORMA_LLM_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="positive"):
        get_llm(environ={"NORMA_LLM_URL": "http://h", "NORMA_LLM_MODEL": "m", "NORMA_LLM_TIMEOUT": "-1"})
    with pytest.raises(ConfigError, match="max_retries"):
        RetryPolicy(max_retries=-1)


def test_redact_url_hides_credentials_and_query() -> None:
    assert redact_url("https://user:pw@host:8443/v1?key=abc") == "https://***@host:8443/v1?***"
    assert redact_url("http://localhost:11434/api/chat") == "http://localhost:11434/api/chat"


def test_key_is_not_in_the_repr_of_settings_or_client() -> None:
    client = get_llm("https://user:pw@h/v1", "m", "sk-very-secret", environ={})
    assert client is not None
    for text in (repr(client), repr(client.settings), str(client.settings)):
        assert "sk-very-secret" not in text
        assert ":pw@" not in text
        assert "***" in text


def test_models_drop_repeats_in_order() -> None:
    settings = LLMSettings(url="http://h", model="a", kind="openai", fallback_models=("b", "a", "c", "b"))
    assert settings.models == ("a", "b", "c")


@given(
    st.integers(min_value=0, max_value=30),
    st.floats(min_value=0, max_value=0.999999),
    st.floats(min_value=0.001, max_value=10),
    st.floats(min_value=0.001, max_value=60),
)
def test_backoff_stays_within_half_and_full_ceiling(retry: int, unit: float, base: float, ceiling: float) -> None:
    policy = RetryPolicy(backoff_base=base, backoff_max=ceiling)
    full = min(ceiling, base * 2.0**retry)
    wait = policy.backoff(retry, unit)
    assert full / 2 - 1e-9 <= wait <= full + 1e-9


def test_backoff_doubles_until_the_ceiling() -> None:
    policy = RetryPolicy(backoff_base=1.0, backoff_max=5.0)
    assert [policy.backoff(n, 1.0) for n in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert [policy.backoff(n, 0.0) for n in range(4)] == [0.5, 1.0, 2.0, 2.5]
