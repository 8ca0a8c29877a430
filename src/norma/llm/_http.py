"""The HTTP machinery both backends share: one retry plan, driven by a sync and an async loop.

The plan (:meth:`ChatClient._plan`) is a generator that knows nothing about I/O: it yields "post this body" or
"sleep this long" and is sent back the response or the transport error. The sync and async loops only perform
those two actions, so both follow exactly the same policy:

* 2xx: the reply is parsed; a body that is not a chat reply raises :class:`LLMBackendError` at once.
* 429 and 5xx: retried with backoff and jitter (``Retry-After`` honoured up to ``max_retry_after``); when the
  retries run out, the next fallback model is tried.
* 404 (unknown model, or wrong path): the next fallback model is tried at once.
* 401 and 403: give up at once (the key is wrong; another model will not help).
* other 4xx: give up at once (the request itself is wrong).
* connection refused, dropped or timed out while connecting: retried; when the retries run out, give up (the
  server is down for every model).
* read timeout (the model is too slow): the next fallback model is tried at once, without a retry.

Structured output: a call with a :class:`~norma.llm.ReplySchema` sends it in the backend's field
(``response_format`` or ``format``). A server that rejects that field (400 or 422 naming it) is asked once more at
once without it, and the client remembers, for its lifetime, not to send it again; the caller's strict reading of
the reply is then all that holds it to the schema.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import logging
import random
import ssl
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

import httpx

from norma._version import __version__
from norma.errors import BackendError
from norma.llm._config import BackendKind, LLMSettings, RetryPolicy, redact_url
from norma.llm._messages import clean_reply, to_messages
from norma.llm._protocol import Prompt, ReplySchema

__all__ = ["ChatClient", "ChatReply", "LLMBackendError"]

logger = logging.getLogger("norma.llm")

_SNIPPET = 200


class LLMBackendError(BackendError):
    """An LLM server that failed or answered nonsense, after every retry and fallback model.

    ``endpoint`` is the URL (without credentials), ``status`` the last HTTP status (None when no response came
    back), ``attempts`` the number of requests sent.
    """

    def __init__(self, message: str, *, endpoint: str, status: int | None, attempts: int, hint: str | None = None):
        super().__init__(message, source=endpoint, hint=hint)
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts


@dataclass(frozen=True)
class ChatReply:
    """One answered chat request."""

    text: str
    """The reply, without a leading ``<think>`` block and surrounding blanks."""
    model: str
    """The model that answered (as the server names it)."""
    endpoint: str
    """The URL that answered, without credentials."""
    latency_s: float
    """Seconds from the first request to the reply, retries included."""
    attempts: int
    """Requests sent (1 when nothing was retried)."""


@dataclass(frozen=True)
class _Post:
    body: dict[str, Any]


@dataclass(frozen=True)
class _Sleep:
    seconds: float


_Action = _Post | _Sleep
_Outcome = httpx.Response | httpx.TransportError
_Plan = Generator[_Action, _Outcome | None, ChatReply]


class ChatClient:
    """Base of the HTTP backends: settings, headers, the retry plan and the sync/async loops.

    Subclasses give the endpoint path (:meth:`_endpoint`), the request body (:meth:`_body`) and the reply
    parser (:meth:`_parse`). Instances hold no connection: each call opens its own (retries reuse it) and closes
    it, so a client is safe to share between threads and event loops and never leaks a socket.
    """

    kind: ClassVar[BackendKind]
    """The protocol: each subclass sets it."""
    schema_field: ClassVar[str]
    """The request field that carries a reply schema (``response_format``, ``format``): each subclass sets it."""

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        fallback_models: Sequence[str] = (),
        connect_timeout: float = 5.0,
        read_timeout: float = 120.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        settings = LLMSettings(
            url=url,
            model=model,
            kind=self.kind,
            api_key=api_key,
            fallback_models=tuple(fallback_models),
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            retry=retry or RetryPolicy(),
        )
        self.settings = settings
        self.model = settings.model
        self.endpoint = self._endpoint(settings.url)
        self._rng = random.Random()
        self._schema_refused = False

    def __repr__(self) -> str:
        fallbacks = f", fallback_models={self.settings.fallback_models!r}" if self.settings.fallback_models else ""
        return f"{type(self).__name__}(url={redact_url(self.endpoint)!r}, model={self.model!r}{fallbacks})"

    # -- what subclasses provide -------------------------------------------------------------------------------

    def _endpoint(self, url: str) -> str:
        raise NotImplementedError

    def _body(
        self,
        model: str,
        messages: list[dict[str, str]],
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
        schema: ReplySchema | None,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def _parse(self, data: Any) -> tuple[str, str | None]:
        """``(reply text, model name)`` from a decoded 2xx body; ValueError when it is not a chat reply."""
        raise NotImplementedError

    # -- public API --------------------------------------------------------------------------------------------

    def complete(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        schema: ReplySchema | None = None,
    ) -> str:
        """The model's reply to ``prompt_or_messages``; :class:`LLMBackendError` when every try failed.

        ``schema``: ask for a reply that follows this JSON Schema (structured output), unless the server refused it
        before; the reply is returned as text either way.
        """
        return self.chat(
            prompt_or_messages, temperature=temperature, max_tokens=max_tokens, seed=seed, schema=schema
        ).text

    async def acomplete(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        schema: ReplySchema | None = None,
    ) -> str:
        """Same as :meth:`complete`, without blocking the event loop."""
        reply = await self.achat(
            prompt_or_messages, temperature=temperature, max_tokens=max_tokens, seed=seed, schema=schema
        )
        return reply.text

    def chat(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        schema: ReplySchema | None = None,
    ) -> ChatReply:
        """Like :meth:`complete`, with the answering model, latency and attempt count."""
        plan = self._plan(prompt_or_messages, temperature, max_tokens, seed, schema)
        with httpx.Client(timeout=self._timeout(), verify=_ssl_context(), follow_redirects=False) as client:
            try:
                action = next(plan)
                while True:
                    if isinstance(action, _Sleep):
                        time.sleep(action.seconds)
                        action = plan.send(None)
                        continue
                    outcome: _Outcome
                    try:
                        outcome = client.post(self.endpoint, json=action.body, headers=self._headers())
                    except httpx.TransportError as exc:
                        outcome = exc
                    action = plan.send(outcome)
            except StopIteration as stop:
                reply: ChatReply = stop.value
                return reply

    async def achat(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        schema: ReplySchema | None = None,
    ) -> ChatReply:
        """Like :meth:`chat`, without blocking the event loop."""
        plan = self._plan(prompt_or_messages, temperature, max_tokens, seed, schema)
        async with httpx.AsyncClient(timeout=self._timeout(), verify=_ssl_context(), follow_redirects=False) as client:
            try:
                action = next(plan)
                while True:
                    if isinstance(action, _Sleep):
                        await asyncio.sleep(action.seconds)
                        action = plan.send(None)
                        continue
                    outcome: _Outcome
                    try:
                        outcome = await client.post(self.endpoint, json=action.body, headers=self._headers())
                    except httpx.TransportError as exc:
                        outcome = exc
                    action = plan.send(outcome)
            except StopIteration as stop:
                reply: ChatReply = stop.value
                return reply

    def close(self) -> None:
        """Nothing to free: each call opens and closes its own connections (kept for ``with`` blocks)."""

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------------------------------

    def _timeout(self) -> httpx.Timeout:
        s = self.settings
        return httpx.Timeout(
            connect=s.connect_timeout, read=s.read_timeout, write=s.read_timeout, pool=s.connect_timeout
        )

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": f"norma/{__version__}"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    @property
    def sends_schema(self) -> bool:
        """False once the server has refused a reply schema: later calls ask without one."""
        return not self._schema_refused

    def _plan(
        self, prompt: Prompt, temperature: float, max_tokens: int | None, seed: int | None, schema: ReplySchema | None
    ) -> _Plan:
        messages = to_messages(prompt)
        policy = self.settings.retry
        endpoint = redact_url(self.endpoint)
        started = time.perf_counter()
        attempts = 0
        status: int | None = None
        failures: list[str] = []
        for model in self.settings.models:
            asked = None if self._schema_refused else schema
            body = self._body(model, messages, temperature, max_tokens, seed, asked)
            retry = 0
            while True:
                attempts += 1
                outcome = yield _Post(body)
                if outcome is None:
                    raise TypeError("the plan must be sent the outcome of each post")
                reason: str
                wait: float | None = None
                if isinstance(outcome, httpx.Response):
                    status = outcome.status_code
                    if 200 <= status < 300:
                        text, answered_by = self._decode(outcome, endpoint, attempts)
                        elapsed = time.perf_counter() - started
                        return ChatReply(text, answered_by or model, endpoint, elapsed, attempts)
                    reason = f"HTTP {status}{self._server_message(outcome)}"
                    if status in (401, 403):
                        raise LLMBackendError(
                            f"the LLM server refused the request: {reason}",
                            endpoint=endpoint,
                            status=status,
                            attempts=attempts,
                            hint="check NORMA_LLM_API_KEY (or the api_key argument)",
                        )
                    if status == 404:
                        failures.append(f"model {model!r}: {reason}")
                        break
                    if asked is not None and self._refuses_schema(outcome):
                        self._schema_refused = True
                        asked = None
                        logger.warning(
                            "LLM %s: the server refused %s (%s); asking without it from now on",
                            endpoint,
                            self.schema_field,
                            reason,
                        )
                        body = self._body(model, messages, temperature, max_tokens, seed, None)
                        continue
                    if status != 429 and status < 500:
                        raise LLMBackendError(
                            f"the LLM server rejected the request for model {model!r}: {reason}",
                            endpoint=endpoint,
                            status=status,
                            attempts=attempts,
                            hint="check the URL, the model name and the backend kind (ollama or openai)",
                        )
                    retry_after = _retry_after(outcome.headers)
                    if retry_after is not None and retry_after > policy.max_retry_after:
                        failures.append(f"model {model!r}: {reason}, Retry-After {retry_after:.0f} s is too long")
                        break
                    wait = max(policy.backoff(retry, self._rng.random()), retry_after or 0.0)
                else:
                    status = None
                    reason = _describe_transport_error(outcome)
                    if isinstance(outcome, httpx.ReadTimeout):
                        failures.append(f"model {model!r}: {reason}")
                        break
                    wait = policy.backoff(retry, self._rng.random())
                if retry >= policy.max_retries:
                    failures.append(f"model {model!r}: {reason} after {retry + 1} attempts")
                    if not isinstance(outcome, httpx.Response) and _is_connection_error(outcome):
                        raise self._give_up(endpoint, status=None, attempts=attempts, failures=failures)
                    break
                logger.warning(
                    "LLM %s: %s for model %r; retrying in %.2f s (%d of %d)",
                    endpoint,
                    reason,
                    model,
                    wait,
                    retry + 1,
                    policy.max_retries,
                )
                yield _Sleep(wait)
                retry += 1
            if model != self.settings.models[-1]:
                logger.warning("LLM %s: giving up on model %r (%s); trying the next one", endpoint, model, failures[-1])
        raise self._give_up(endpoint, status=status, attempts=attempts, failures=failures)

    def _refuses_schema(self, response: httpx.Response) -> bool:
        """A 400 or 422 whose message names the schema field: the server does not take structured output."""
        if response.status_code not in (400, 422):
            return False
        return self.schema_field in self._server_message(response).lower()

    def _decode(self, response: httpx.Response, endpoint: str, attempts: int) -> tuple[str, str | None]:
        try:
            text, model = self._parse(response.json())
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMBackendError(
                f"the LLM server answered HTTP {response.status_code} with something that is not a chat reply "
                f"({type(exc).__name__}: {self._scrub(str(exc))[:_SNIPPET]})",
                endpoint=endpoint,
                status=response.status_code,
                attempts=attempts,
                hint=f"check that the URL points at an {self.kind} server",
            ) from None
        return clean_reply(text), model

    def _server_message(self, response: httpx.Response) -> str:
        try:
            data = response.json()
        except ValueError:
            text = response.text
        else:
            text = _error_text(data)
        text = " ".join(self._scrub(text).split())[:_SNIPPET]
        return f" ({text})" if text else ""

    def _scrub(self, text: str) -> str:
        key = self.settings.api_key
        return text.replace(key, "***") if key else text

    def _give_up(self, endpoint: str, *, status: int | None, attempts: int, failures: list[str]) -> LLMBackendError:
        tried = "; ".join(failures)
        last = f"HTTP {status}" if status is not None else "no response"
        return LLMBackendError(
            f"the LLM gave up after {attempts} attempt{'s' if attempts != 1 else ''} ({last}): {tried}",
            endpoint=endpoint,
            status=status,
            attempts=attempts,
            hint="check that the server is running and the model is available; for Ollama run: ollama pull MODEL",
        )


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process (building one loads the CA bundle: ~0.1 s)."""
    return httpx.create_ssl_context()


def _error_text(data: Any) -> str:
    if isinstance(data, Mapping):
        error = data.get("error", data.get("detail", data.get("message", "")))
        if isinstance(error, Mapping):
            error = error.get("message", "")
        return str(error)
    return ""


def _retry_after(headers: httpx.Headers) -> float | None:
    """``Retry-After`` in seconds (a number, or an HTTP date), None when absent or unreadable."""
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(0.0, seconds) if seconds == seconds else None


def _is_connection_error(error: httpx.TransportError) -> bool:
    return isinstance(error, httpx.ConnectError | httpx.ConnectTimeout)


def _describe_transport_error(error: httpx.TransportError) -> str:
    if isinstance(error, httpx.ConnectTimeout):
        return "connection timed out"
    if isinstance(error, httpx.ConnectError):
        return "connection failed"
    if isinstance(error, httpx.ReadTimeout):
        return "no reply within the read timeout"
    if isinstance(error, httpx.TimeoutException):
        return "timed out"
    return f"connection dropped ({type(error).__name__})"
