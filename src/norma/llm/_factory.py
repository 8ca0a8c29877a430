"""Building a client from arguments or the ``NORMA_LLM_*`` environment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from norma.llm._config import LLMSettings, RetryPolicy
from norma.llm._http import ChatClient
from norma.llm._ollama import OllamaClient
from norma.llm._openai import OpenAIClient
from norma.llm._pool import HttpPool

__all__ = ["client_from_settings", "get_llm"]


def get_llm(
    url: str | None = None,
    model: str | Sequence[str] | None = None,
    api_key: str | None = None,
    *,
    kind: str | None = None,
    fallback_models: Sequence[str] = (),
    connect_timeout: float | None = None,
    read_timeout: float | None = None,
    retry: RetryPolicy | None = None,
    environ: Mapping[str, str] | None = None,
    http: HttpPool | None = None,
) -> ChatClient | None:
    """The client the arguments or ``$NORMA_LLM_URL``/``_MODEL``/``_API_KEY``/``_KIND`` describe; None when unset.

    Arguments win over the environment. ``model`` may name fallbacks (``"llama3.2,qwen2.5"`` or a list). The
    backend is ``kind`` if given, else guessed from the URL (Ollama for port 11434 or a path ending in ``/api``,
    OpenAI-compatible otherwise). Raises :class:`norma.errors.ConfigError` for a URL without a model, a URL that
    is not http(s), or an unknown kind. ``http``: pooled connections to share (None: each call opens its own).
    """
    settings = LLMSettings.from_env(
        url,
        model,
        api_key,
        kind=kind,
        fallback_models=fallback_models,
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retry=retry,
        environ=environ,
    )
    return None if settings is None else client_from_settings(settings, http=http)


def client_from_settings(settings: LLMSettings, *, http: HttpPool | None = None) -> ChatClient:
    """An :class:`OllamaClient` or :class:`OpenAIClient` for ``settings.kind``."""
    cls = OllamaClient if settings.kind == "ollama" else OpenAIClient
    return cls(
        settings.url,
        settings.model,
        api_key=settings.api_key,
        fallback_models=settings.fallback_models,
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.read_timeout,
        retry=settings.retry,
        http=http,
    )
