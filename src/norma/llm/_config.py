"""Where the LLM is and how hard to try: URL, model and fallbacks, backend kind, timeouts, retry policy.

Settings come from arguments first, then the environment:

* ``NORMA_LLM_URL`` — the server (``http://localhost:11434`` for Ollama, ``https://host/v1`` for an
  OpenAI-compatible one); unset means "no LLM configured".
* ``NORMA_LLM_MODEL`` — the model; a comma-separated list names fallbacks tried in order
  (``llama3.2,qwen2.5:3b``).
* ``NORMA_LLM_API_KEY`` — sent as ``Authorization: Bearer ...``; never logged, never in a message or ``repr``.
* ``NORMA_LLM_KIND`` — ``ollama`` or ``openai`` when the URL does not make it obvious.
* ``NORMA_LLM_TIMEOUT`` — read timeout in seconds (how long one reply may take).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from norma.errors import ConfigError

__all__ = [
    "API_KEY_ENV",
    "KIND_ENV",
    "MODEL_ENV",
    "TIMEOUT_ENV",
    "URL_ENV",
    "BackendKind",
    "LLMSettings",
    "RetryPolicy",
    "detect_kind",
    "redact_url",
]

URL_ENV = "NORMA_LLM_URL"
MODEL_ENV = "NORMA_LLM_MODEL"
API_KEY_ENV = "NORMA_LLM_API_KEY"
KIND_ENV = "NORMA_LLM_KIND"
TIMEOUT_ENV = "NORMA_LLM_TIMEOUT"

BackendKind = Literal["ollama", "openai"]
_KINDS: tuple[BackendKind, ...] = ("ollama", "openai")
_OLLAMA_PORT = 11434


@dataclass(frozen=True)
class RetryPolicy:
    """How a client retries 429, 5xx and dropped connections: exponential backoff with jitter.

    The n-th retry (n = 0, 1, ...) waits a random time in ``[d/2, d]`` with ``d = min(backoff_max,
    backoff_base * 2**n)``, or the server's ``Retry-After`` when that is longer. A ``Retry-After`` above
    ``max_retry_after`` is not waited for: the client gives up on that model at once.
    """

    max_retries: int = 3
    """Retries after the first attempt, per model (0 = try once)."""
    backoff_base: float = 0.5
    """Seconds before the first retry (before jitter)."""
    backoff_max: float = 8.0
    """Longest backoff between two attempts, in seconds."""
    max_retry_after: float = 30.0
    """Longest ``Retry-After`` the client honours, in seconds."""

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0, not {self.max_retries}")
        for name in ("backoff_base", "backoff_max", "max_retry_after"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, not {getattr(self, name)}")

    def backoff(self, retry: int, unit: float) -> float:
        """The wait before retry number ``retry`` (from 0), for a random ``unit`` in [0, 1)."""
        ceiling = min(self.backoff_max, self.backoff_base * (2.0**retry))
        return ceiling / 2 + unit * ceiling / 2


@dataclass(frozen=True, repr=False)
class LLMSettings:
    """Everything a client needs; :meth:`from_env` fills what the arguments leave out.

    The ``repr`` shows the URL without credentials and never the API key.
    """

    url: str
    """Base URL of the server, or the full chat endpoint."""
    model: str
    """The model tried first."""
    kind: BackendKind
    """Which protocol the server speaks."""
    api_key: str | None = field(default=None, repr=False)
    """Bearer key, if the server needs one (never shown)."""
    fallback_models: tuple[str, ...] = ()
    """Models tried in order when the first one is missing or keeps failing."""
    connect_timeout: float = 5.0
    """Seconds to wait for the TCP (and TLS) connection."""
    read_timeout: float = 120.0
    """Seconds to wait for the reply (the whole generation: replies are not streamed)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """When and how long to retry."""

    def __post_init__(self) -> None:
        if not self.url.strip():
            raise ConfigError("the LLM URL is empty", hint=f"set {URL_ENV}, e.g. http://localhost:11434")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"the LLM URL {redact_url(self.url)!r} is not an http(s) URL",
                source=URL_ENV,
                hint="use a URL like http://localhost:11434 or https://api.example.com/v1",
            )
        if not self.model.strip():
            raise ConfigError(f"no LLM model given for {redact_url(self.url)}", hint=f"set {MODEL_ENV} (e.g. llama3.2)")
        if self.kind not in _KINDS:
            raise ConfigError(f"unknown LLM backend kind {self.kind!r}", hint="use 'ollama' or 'openai'")
        if self.connect_timeout <= 0 or self.read_timeout <= 0:
            raise ConfigError("LLM timeouts must be positive numbers of seconds", source=TIMEOUT_ENV)

    def __repr__(self) -> str:
        key = "'***'" if self.api_key else "None"
        return (
            f"LLMSettings(url={redact_url(self.url)!r}, model={self.model!r}, kind={self.kind!r}, api_key={key}, "
            f"fallback_models={self.fallback_models!r}, connect_timeout={self.connect_timeout!r}, "
            f"read_timeout={self.read_timeout!r}, retry={self.retry!r})"
        )

    @property
    def models(self) -> tuple[str, ...]:
        """The model and its fallbacks, in the order they are tried, without repeats."""
        return tuple(dict.fromkeys((self.model, *self.fallback_models)))

    @classmethod
    def from_env(
        cls,
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
    ) -> LLMSettings | None:
        """Settings from the arguments, else ``NORMA_LLM_*``; None when no URL is given either way."""
        env = os.environ if environ is None else environ
        url = url or env.get(URL_ENV, "").strip() or None
        if url is None:
            return None
        models = _split_models(model if model is not None else env.get(MODEL_ENV, ""))
        if not models:
            raise ConfigError(
                f"an LLM URL is set ({redact_url(url)}) but no model", hint=f"set {MODEL_ENV} (e.g. llama3.2)"
            )
        key = api_key if api_key is not None else (env.get(API_KEY_ENV) or None)
        chosen = (kind or env.get(KIND_ENV, "")).strip().lower() or detect_kind(url)
        if chosen not in _KINDS:
            raise ConfigError(f"unknown LLM backend kind {chosen!r}", source=KIND_ENV, hint="use 'ollama' or 'openai'")
        timeout = read_timeout if read_timeout is not None else _env_float(env, TIMEOUT_ENV)
        return cls(
            url=url,
            model=models[0],
            kind=chosen,  # checked against _KINDS above
            api_key=key,
            fallback_models=(*models[1:], *fallback_models),
            connect_timeout=connect_timeout if connect_timeout is not None else 5.0,
            read_timeout=timeout if timeout is not None else 120.0,
            retry=retry or RetryPolicy(),
        )


def detect_kind(url: str) -> BackendKind:
    """``ollama`` for port 11434 or a path ending in ``/api`` or ``/api/chat``; ``openai`` otherwise."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port == _OLLAMA_PORT and not path.endswith(("/v1", "/chat/completions")):
        return "ollama"
    if path.endswith(("/api", "/api/chat")):
        return "ollama"
    return "openai"


def redact_url(url: str) -> str:
    """``url`` without a user, password or query string (which can carry keys)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port is not None else host
    if parts.username or parts.password:
        netloc = f"***@{netloc}"
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _split_models(value: str | Sequence[str]) -> list[str]:
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item.strip() for item in items if item and item.strip()]


def _env_float(env: Mapping[str, str], name: str) -> float | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, not {raw!r}", source=name) from None
    if not value > 0:
        raise ConfigError(f"{name} must be a positive number of seconds, not {raw!r}", source=name)
    return value
