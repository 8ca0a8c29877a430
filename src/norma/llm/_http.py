"""The HTTP machinery both backends share: one retry plan, driven by a sync and an async loop, and the streamed
replies.

The plan (:meth:`ChatClient._plan`) is a generator that knows nothing about I/O: it yields "post this body" or
"sleep this long" and is sent back the response or the :class:`~norma.llm._faults.Fault` of the transport. The sync
and async loops only perform those two actions, so both follow exactly the same policy:

* 2xx: the reply is parsed; a body that is not a chat reply raises :class:`LLMBackendError` at once.
* 429 and 5xx: retried with backoff and jitter (``Retry-After`` honoured up to ``max_retry_after``); when the
  retries run out, the next fallback model is tried.
* 404 (unknown model, or wrong path): the next fallback model is tried at once.
* 401 and 403: give up at once (the key is wrong; another model will not help).
* other 4xx: give up at once (the request itself is wrong).
* connection refused, dropped or timed out while connecting: retried; when the retries run out, give up (the
  server is down for every model).
* no answer within the read timeout (the model is too slow; for the async loop the whole request is bounded by
  it): the next fallback model is tried at once, without a retry.

Structured output: a call with a :class:`~norma.llm.ReplySchema` sends it in the backend's field
(``response_format`` or ``format``). A server that rejects that field (400 or 422 naming it) is asked once more at
once without it, and the client remembers, for its lifetime, not to send it again; the caller's strict reading of
the reply is then all that holds it to the schema.

A streamed reply (:meth:`ChatClient.stream`, :meth:`ChatClient.astream`) is one request, never retried (its first
events may already be passed on): a fault, before the first event or after some, raises :class:`LLMBackendError`,
and a stream that ends without its end mark is a fault (its answer may be cut).

Connections: a client given an :class:`~norma.llm._pool.HttpPool` shares its pooled connections; without one each
call opens its own and closes them after it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from norma._version import __version__
from norma.llm._config import BackendKind, LLMSettings, RetryPolicy, redact_url
from norma.llm._faults import Fault, LLMBackendError, scrub
from norma.llm._messages import clean_reply, to_messages
from norma.llm._pool import HttpPool, aconnection, connection
from norma.llm._protocol import ChatDelta, ChatReply, Prompt, ReplySchema, Usage

__all__ = ["ChatClient", "Parsed", "stream_object"]

logger = logging.getLogger("norma.llm")


@dataclass(frozen=True)
class Parsed:
    """What a backend reads in a decoded 2xx answer."""

    content: str
    model: str | None = None
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class _Post:
    body: dict[str, Any]


@dataclass(frozen=True)
class _Sleep:
    seconds: float


_Action = _Post | _Sleep
_Outcome = httpx.Response | Fault
_Plan = Generator[_Action, _Outcome | None, ChatReply]
_Bodies = Callable[[str, ReplySchema | None], dict[str, Any]]
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""What ends a line of a stream (a JSON payload holds none: JSON escapes control characters)."""
MAX_STREAM_LINE = 1 << 20
"""Characters of one streamed line at most (an event is a few hundred): a server that sends more without a line break
is a fault, not memory spent without bound."""


def stream_object(text: str, what: str) -> dict[str, Any]:
    """The JSON object of one streamed event (``what`` names it in the error: ``an event``, ``a line``); ValueError
    (after "the upstream") when it is not one."""
    try:
        event = json.loads(text)
    except ValueError:
        raise ValueError(f"streamed {what} that is not JSON") from None
    if not isinstance(event, dict):
        raise ValueError(f"streamed {what} that is not an object")
    return event


class ChatClient:
    """Base of the HTTP backends: settings, headers, the retry plan, the sync/async loops and the streams.

    Subclasses give the endpoint path (:meth:`_endpoint`), the request body (:meth:`_body`), the reply parser
    (:meth:`_parse`) and the reading of a streamed reply (:attr:`stream_type`, :meth:`_stream_line`,
    :meth:`_delta_text`). Safe to share between threads and event loops.
    """

    kind: ClassVar[BackendKind]
    """The protocol: each subclass sets it."""
    schema_field: ClassVar[str]
    """The request field that carries a reply schema (``response_format``, ``format``): each subclass sets it."""
    stream_type: ClassVar[str]
    """The content type of a streamed reply (``text/event-stream``, ``application/x-ndjson``)."""
    stream_end: ClassVar[str]
    """What ends a streamed reply (``[DONE]``, ``done``), as faults name it."""
    whole: ClassVar[Mapping[str, Any]] = {}
    """What a relayed request adds so that its reply comes whole (Ollama streams unless told not to)."""

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
        http: HttpPool | None = None,
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
        self.http = http
        """The pooled connections this client shares (None: each call opens its own)."""
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

    def _parse(self, data: Any) -> Parsed:
        """What a decoded 2xx body says; ValueError (its message after "the upstream": ``answered without
        choices``) when it is not a chat reply."""
        raise NotImplementedError

    def _stream_line(self, line: str) -> tuple[Mapping[str, Any] | None, bool]:
        """One line of a streamed reply: ``(its event or None, whether it ends the stream)``; ValueError (as for
        :meth:`_parse`) when it breaks the format."""
        raise NotImplementedError

    def _delta_text(self, event: Mapping[str, Any]) -> str:
        """The text a streamed event adds to the reply."""
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
        request: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """The model's reply to ``prompt_or_messages``; :class:`LLMBackendError` when every try failed.

        ``schema``: ask for a reply that follows this JSON Schema (structured output), unless the server refused it
        before; the reply is returned as text either way. ``request``: a request body of the backend's protocol, as
        a client of a gateway sent it (its ``model``, ``temperature``, tools, ...): it is sent as it is, with
        ``prompt_or_messages`` (then sent as they are, their other fields kept) as its messages; ``temperature``,
        ``max_tokens``, ``seed`` and ``schema`` are then not used.
        """
        plan = self._plan(*self._bodies(prompt_or_messages, temperature, max_tokens, seed, request), schema)
        with connection(self.http) as client:
            try:
                action = next(plan)
                while True:
                    if isinstance(action, _Sleep):
                        time.sleep(action.seconds)
                        action = plan.send(None)
                        continue
                    outcome: _Outcome
                    try:
                        outcome = client.post(
                            self.endpoint, json=action.body, headers=self._headers(), timeout=self._timeout()
                        )
                    except httpx.TransportError as exc:
                        outcome = Fault.of_transport(exc, self.settings.read_timeout)
                    action = plan.send(outcome)
            except StopIteration as stop:
                reply: ChatReply = stop.value
                return reply

    async def acomplete(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        schema: ReplySchema | None = None,
        request: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """Same as :meth:`complete`, without blocking the event loop (each request bounded by the read timeout)."""
        plan = self._plan(*self._bodies(prompt_or_messages, temperature, max_tokens, seed, request), schema)
        async with aconnection(self.http) as client:
            try:
                action = next(plan)
                while True:
                    if isinstance(action, _Sleep):
                        await asyncio.sleep(action.seconds)
                        action = plan.send(None)
                        continue
                    outcome: _Outcome
                    try:
                        async with asyncio.timeout(self.settings.read_timeout):
                            outcome = await client.post(
                                self.endpoint, json=action.body, headers=self._headers(), timeout=self._timeout()
                            )
                    except TimeoutError:
                        outcome = Fault("timeout", seconds=self.settings.read_timeout)
                    except httpx.TransportError as exc:
                        outcome = Fault.of_transport(exc, self.settings.read_timeout)
                    action = plan.send(outcome)
            except StopIteration as stop:
                reply: ChatReply = stop.value
                return reply

    def stream(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        request: Mapping[str, Any] | None = None,
    ) -> Generator[ChatDelta]:
        """The reply as it comes: the events that arrived together, one :class:`ChatDelta` at a time (arguments as
        :meth:`complete`); :class:`LLMBackendError` for a fault, before the first event or after some."""
        body = self._stream_body(prompt_or_messages, temperature, max_tokens, seed, request)
        reading = _Reading(self)
        with connection(self.http) as client:
            try:
                with client.stream(
                    "POST", self.endpoint, json=body, headers=self._headers(), timeout=self._timeout()
                ) as response:
                    reading.open(response, response.read() if response.status_code >= 400 else b"")
                    for text in response.iter_text():
                        yield from reading.feed(text)
                        if reading.done:
                            return
            except httpx.TransportError as exc:
                raise reading.failure(Fault.of_transport(exc, self.settings.read_timeout)) from None
        yield from reading.end()

    async def astream(
        self,
        prompt_or_messages: Prompt,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
        request: Mapping[str, Any] | None = None,
    ) -> AsyncGenerator[ChatDelta]:
        """Same as :meth:`stream`, without blocking the event loop (each read bounded by the read timeout)."""
        body = self._stream_body(prompt_or_messages, temperature, max_tokens, seed, request)
        reading = _Reading(self)
        async with aconnection(self.http) as client:
            try:
                async with client.stream(
                    "POST", self.endpoint, json=body, headers=self._headers(), timeout=self._timeout()
                ) as response:
                    reading.open(response, await response.aread() if response.status_code >= 400 else b"")
                    async for text in response.aiter_text():
                        for delta in reading.feed(text):
                            yield delta
                        if reading.done:
                            return
            except httpx.TransportError as exc:
                raise reading.failure(Fault.of_transport(exc, self.settings.read_timeout)) from None
        for delta in reading.end():
            yield delta

    def close(self) -> None:
        """Nothing to free: the connections are a call's own or the pool's (its owner closes it); kept for ``with``
        blocks."""

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------------------------------

    def _timeout(self) -> httpx.Timeout:
        s = self.settings
        return httpx.Timeout(connect=s.connect_timeout, read=s.read_timeout, write=s.read_timeout, pool=s.read_timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": f"norma/{__version__}"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    @property
    def sends_schema(self) -> bool:
        """False once the server has refused a reply schema: later calls ask without one."""
        return not self._schema_refused

    def _bodies(
        self,
        prompt: Prompt,
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
        request: Mapping[str, Any] | None,
    ) -> tuple[tuple[str, ...], _Bodies]:
        """The models to try and the body of a request to each (with or without a reply schema)."""
        if request is None:
            messages = to_messages(prompt)
            return self.settings.models, lambda model, schema: self._body(
                model, messages, temperature, max_tokens, seed, schema
            )
        relayed = {**request, "messages": [dict(m) for m in _as_messages(prompt)], **self.whole}
        model = relayed.get("model")
        models = (model,) if isinstance(model, str) and model else self.settings.models
        return models, lambda model, schema: {**relayed, "model": model}

    def _stream_body(
        self,
        prompt: Prompt,
        temperature: float,
        max_tokens: int | None,
        seed: int | None,
        request: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        models, bodies = self._bodies(prompt, temperature, max_tokens, seed, request)
        return {**bodies(models[0], None), "stream": True}

    def _plan(self, models: tuple[str, ...], bodies: _Bodies, schema: ReplySchema | None) -> _Plan:
        policy = self.settings.retry
        endpoint = redact_url(self.endpoint)
        started = time.perf_counter()
        attempts = 0
        status: int | None = None
        fault: Fault | None = None
        failures: list[str] = []
        for model in models:
            asked = None if self._schema_refused else schema
            body = bodies(model, asked)
            retry = 0
            while True:
                attempts += 1
                outcome = yield _Post(body)
                if outcome is None:
                    raise TypeError("the plan must be sent the outcome of each post")
                wait: float | None = None
                if isinstance(outcome, httpx.Response):
                    status = outcome.status_code
                    if 200 <= status < 300:
                        return self._reply(outcome, model, endpoint, attempts, started)
                    fault = Fault.of_status(outcome, outcome.content, self.settings.api_key)
                    if status in (401, 403):
                        raise LLMBackendError(
                            f"the LLM server refused the request: {fault.reason}",
                            endpoint=endpoint,
                            status=status,
                            attempts=attempts,
                            hint="check NORMA_LLM_API_KEY (or the api_key argument)",
                            fault=fault,
                        )
                    if status == 404:
                        failures.append(f"model {model!r}: {fault.reason}")
                        break
                    if asked is not None and self._refuses_schema(fault):
                        self._schema_refused = True
                        asked = None
                        logger.warning(
                            "LLM %s: the server refused %s (%s); asking without it from now on",
                            endpoint,
                            self.schema_field,
                            fault.reason,
                        )
                        body = bodies(model, None)
                        continue
                    if status != 429 and status < 500:
                        raise LLMBackendError(
                            f"the LLM server rejected the request for model {model!r}: {fault.reason}",
                            endpoint=endpoint,
                            status=status,
                            attempts=attempts,
                            hint="check the URL, the model name and the backend kind (ollama or openai)",
                            fault=fault,
                        )
                    retry_after = fault.retry_after
                    if retry_after is not None and retry_after > policy.max_retry_after:
                        failures.append(f"model {model!r}: {fault.reason}, Retry-After {retry_after:.0f} s is too long")
                        break
                    wait = max(policy.backoff(retry, self._rng.random()), retry_after or 0.0)
                else:
                    status, fault = None, outcome
                    if fault.kind == "timeout":
                        failures.append(f"model {model!r}: {fault.reason}")
                        break
                    wait = policy.backoff(retry, self._rng.random())
                if retry >= policy.max_retries:
                    failures.append(f"model {model!r}: {fault.reason} after {retry + 1} attempts")
                    if fault.kind == "unreachable":
                        raise self._give_up(endpoint, status=None, attempts=attempts, failures=failures, fault=fault)
                    break
                logger.warning(
                    "LLM %s: %s for model %r; retrying in %.2f s (%d of %d)",
                    endpoint,
                    fault.reason,
                    model,
                    wait,
                    retry + 1,
                    policy.max_retries,
                )
                yield _Sleep(wait)
                retry += 1
            if model != models[-1]:
                logger.warning("LLM %s: giving up on model %r (%s); trying the next one", endpoint, model, failures[-1])
        raise self._give_up(endpoint, status=status, attempts=attempts, failures=failures, fault=fault)

    def _refuses_schema(self, fault: Fault) -> bool:
        """A 400 or 422 whose message names the schema field: the server does not take structured output."""
        return fault.status in (400, 422) and self.schema_field in fault.said.lower()

    def _reply(self, response: httpx.Response, model: str, endpoint: str, attempts: int, started: float) -> ChatReply:
        parsed: Parsed | ValueError
        try:
            data = response.json()
        except (ValueError, UnicodeDecodeError):
            data, parsed = None, ValueError("'s answer is not JSON")
        else:
            try:
                parsed = self._parse(data)
            except ValueError as exc:
                parsed = exc
        if isinstance(parsed, ValueError):
            fault = Fault.garbage(scrub(str(parsed), self.settings.api_key), response.status_code)
            raise LLMBackendError(
                f"the LLM server answered HTTP {response.status_code} with something that is not a chat reply "
                f"({fault.reason})",
                endpoint=endpoint,
                status=response.status_code,
                attempts=attempts,
                hint=f"check that the URL points at an {self.kind} server",
                fault=fault,
            )
        return ChatReply(
            clean_reply(parsed.content),
            parsed.model or model,
            endpoint,
            time.perf_counter() - started,
            attempts,
            content=parsed.content,
            finish_reason=parsed.finish_reason,
            usage=parsed.usage,
            raw=data,
        )

    def _give_up(
        self, endpoint: str, *, status: int | None, attempts: int, failures: list[str], fault: Fault | None
    ) -> LLMBackendError:
        tried = "; ".join(failures)
        last = f"HTTP {status}" if status is not None else "no response"
        return LLMBackendError(
            f"the LLM gave up after {attempts} attempt{'s' if attempts != 1 else ''} ({last}): {tried}",
            endpoint=endpoint,
            status=status,
            attempts=attempts,
            hint="check that the server is running and the model is available; for Ollama run: ollama pull MODEL",
            fault=fault,
        )


class _Reading:
    """A streamed reply read as it comes: whole lines into events, the faults into :class:`LLMBackendError`."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.done = False
        self._pending = ""
        self._events = 0

    def failure(self, fault: Fault) -> LLMBackendError:
        return LLMBackendError(
            f"the LLM server's streamed reply failed: {fault.reason}",
            endpoint=redact_url(self.client.endpoint),
            status=fault.status,
            attempts=1,
            hint="retry; the reply was cut",
            fault=fault,
        )

    def open(self, response: httpx.Response, error_body: bytes) -> None:
        """Check the answer's status and type before its events are read."""
        if response.status_code >= 400:
            raise self.failure(Fault.of_status(response, error_body, self.client.settings.api_key))
        kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != self.client.stream_type:
            raise self.failure(Fault.garbage(f"did not stream (content type {kind or 'none'!r})", 200))

    def feed(self, text: str) -> Iterator[ChatDelta]:
        """The events of the whole lines ``text`` completes (at most one delta)."""
        *lines, self._pending = _LINE_BREAK.split(self._pending + text)
        if len(self._pending) > MAX_STREAM_LINE:
            raise self.failure(Fault.garbage(f"streamed a line longer than {MAX_STREAM_LINE:,} characters", 200))
        return self._deltas(lines)

    def end(self) -> Iterator[ChatDelta]:
        """The events of a last line without its line break; a fault when the end mark never came."""
        lines, self._pending = [self._pending], ""
        yield from self._deltas(lines)
        if not self.done:
            raise self.failure(
                Fault.garbage(
                    f"'s stream ended without {self.client.stream_end}" if self._events else "'s stream had no events",
                    200,
                )
            )

    def _deltas(self, lines: Iterable[str]) -> Iterator[ChatDelta]:
        events: list[Mapping[str, Any]] = []
        fault: Fault | None = None
        for line in lines:
            try:
                event, self.done = self.client._stream_line(line)
            except ValueError as exc:
                fault = Fault.garbage(scrub(str(exc), self.client.settings.api_key), 200)
                break
            if event is not None:
                events.append(event)
            if self.done:
                break
        if events:
            self._events += len(events)
            yield ChatDelta(tuple(events), "".join(self.client._delta_text(e) for e in events))
        if fault is not None:
            raise self.failure(fault)
        if self.done and not self._events:
            raise self.failure(Fault.garbage("'s stream had no events", 200))


def _as_messages(prompt: Prompt) -> Sequence[Mapping[str, Any]]:
    """Messages relayed as a gateway's client sent them (a string: one user message)."""
    return [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
