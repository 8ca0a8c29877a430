"""The upstream of the guarded endpoint: one OpenAI-compatible chat model, called through one shared
:class:`httpx.AsyncClient` per app (bounded pool, closed on shutdown).

Every way the upstream can fail is an :class:`UpstreamError` with the status norma answers and a ``Retry-After``:

* down (connection refused, reset, DNS): 502, ``Retry-After: 1``;
* slower than ``upstream_timeout`` (a whole call; a stream before its first byte and between two): 504,
  ``Retry-After: 5``;
* garbage (not JSON, no ``choices``, no text answer; a stream that breaks its format): 502, ``Retry-After: 1``;
* an error status (4xx or 5xx): 502 naming ``upstream_status`` and the upstream's own error message;
  ``Retry-After`` the upstream's when it sent one, else 1 for a 429 or a 5xx, none for another 4xx (retrying the
  same request will not help).

The upstream's API key is sent as ``Authorization: Bearer`` and is never part of a message, a ``repr`` or a log
line: text from the upstream that an error passes on has it replaced by ``<upstream key>``.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any

import anyio
import httpx
from pydantic import SecretStr

from norma.errors import BackendError

__all__ = ["MAX_CONNECTIONS", "Upstream", "UpstreamError", "answer_text"]

MAX_CONNECTIONS = 200
"""Open connections to the upstream per worker process; more concurrent calls wait for one (within the timeout)."""
MAX_KEEPALIVE = 50
"""Idle connections kept for reuse; the others are closed once their call is done."""
_KEEPALIVE_EXPIRY = 5.0
_KEY_MARK = "<upstream key>"
_MAX_ECHO = 300
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""What ends a line of a server-sent event stream (a JSON payload holds none: JSON escapes control characters)."""


class UpstreamError(BackendError):
    """The upstream failed: ``status`` (502 or 504) is what norma answers, ``retry_after`` its ``Retry-After`` (None:
    none), ``upstream_status`` the upstream's own status when it answered with an error."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 502,
        retry_after: float | None = 1.0,
        upstream_status: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint or "retry after the seconds in Retry-After")
        self.status = status
        self.retry_after = retry_after
        self.upstream_status = upstream_status

    def problem(self) -> dict[str, Any]:
        """The JSON problem (RFC 9457) answered for it."""
        title = "gateway timeout" if self.status == 504 else "bad gateway"
        body: dict[str, Any] = {
            "type": f"urn:norma:problem:{title.replace(' ', '-')}",
            "title": title,
            "status": self.status,
            "detail": self.message,
        }
        if self.upstream_status is not None:
            body["upstream_status"] = self.upstream_status
        if self.hint:
            body["hint"] = self.hint
        return body

    def headers(self) -> dict[str, str]:
        """``Retry-After`` when there is one."""
        if self.retry_after is None:
            return {}
        return {"Retry-After": str(max(1, math.ceil(self.retry_after)))}


def answer_text(data: Any) -> str:
    """The text of ``choices[0].message.content`` of a chat completion; UpstreamError (502) when there is none."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise UpstreamError("the upstream answered without choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise UpstreamError("the upstream's answer has no text content (choices[0].message.content)")
    return content


class Upstream:
    """One OpenAI-compatible chat endpoint (``{url}/chat/completions``) and the client pool that calls it."""

    def __init__(self, url: str, api_key: SecretStr | None, timeout: float) -> None:
        self.url = url.rstrip("/")
        self.endpoint = f"{self.url}/chat/completions"
        self.timeout = timeout
        self._key = api_key
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"Upstream({self.url!r}, timeout={self.timeout:g})"

    @property
    def client(self) -> httpx.AsyncClient:
        """The shared client, made on first use in the event loop that serves the app (called from that loop)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._loop is not loop:
            self._loop = loop  # a client's connections belong to one event loop (a test client may run several)
            headers = {"Accept": "application/json"}
            if self._key is not None:
                headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
            self._client = httpx.AsyncClient(
                headers=headers,
                timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                limits=httpx.Limits(
                    max_connections=MAX_CONNECTIONS,
                    max_keepalive_connections=MAX_KEEPALIVE,
                    keepalive_expiry=_KEEPALIVE_EXPIRY,
                ),
                follow_redirects=False,
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        """Close the client and its connections (the app's shutdown)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def _clean(self, text: str) -> str:
        """Upstream text fit to pass on: the key removed, at most a few hundred characters."""
        if self._key is not None and (secret := self._key.get_secret_value()):
            text = text.replace(secret, _KEY_MARK)
        text = " ".join(text.split())
        return text if len(text) <= _MAX_ECHO else text[: _MAX_ECHO - 1] + "…"

    def _status_error(self, response: httpx.Response, body: bytes) -> UpstreamError:
        status = response.status_code
        said = ""
        try:
            data = json.loads(body)
            error = data.get("error") if isinstance(data, dict) else None
            said = str(error.get("message", "") if isinstance(error, dict) else error or "")
        except (ValueError, UnicodeDecodeError):
            said = ""
        retry: float | None = 1.0 if status == 429 or status >= 500 else None
        given = response.headers.get("retry-after", "").strip()
        if given.isdigit():
            retry = float(given)
        detail = f"the upstream answered {status}" + (f": {self._clean(said)}" if said else "")
        hint = "retry after the seconds in Retry-After" if retry is not None else "fix the request; as is it fails"
        return UpstreamError(detail, retry_after=retry, upstream_status=status, hint=hint)

    def _transport_error(self, exc: httpx.HTTPError) -> UpstreamError:
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
            return self.timed_out()
        if isinstance(exc, httpx.PoolTimeout):
            return UpstreamError("no connection to the upstream was free in time", status=504, retry_after=5.0)
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return UpstreamError(f"the upstream is unreachable ({type(exc).__name__})", retry_after=1.0)
        return UpstreamError(f"the connection to the upstream failed ({type(exc).__name__})", retry_after=1.0)

    def timed_out(self) -> UpstreamError:
        """The error of a call slower than the timeout."""
        return UpstreamError(f"the upstream did not answer within {self.timeout:g} s", status=504, retry_after=5.0)

    async def _json(self, method: str, url: str, body: Mapping[str, Any] | None, what: str) -> Any:
        """One request whose answer is JSON (``what`` names it in errors); UpstreamError for any fault, the whole
        call bounded by the timeout."""
        try:
            with anyio.fail_after(self.timeout):
                response = await self.client.request(method, url, json=None if body is None else dict(body))
        except TimeoutError:
            raise self.timed_out() from None
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None
        if response.status_code >= 400:
            raise self._status_error(response, response.content)
        try:
            return response.json()
        except (ValueError, UnicodeDecodeError):
            raise UpstreamError(f"the upstream's {what} is not JSON") from None

    async def complete(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST one chat completion (not streamed) and return the upstream's JSON object, its answer checked for
        text (:func:`answer_text`); UpstreamError for any fault, the whole call bounded by the timeout."""
        data = await self._json("POST", self.endpoint, body, "answer")
        answer_text(data)
        assert isinstance(data, dict)
        return data

    async def models(self) -> dict[str, Any]:
        """GET the upstream's model list (``{url}/models``, OpenAI's ``{"object": "list", "data": [...]}``);
        UpstreamError for any fault or an answer of another shape, the call bounded by the timeout."""
        data = await self._json("GET", f"{self.url}/models", None, "model list")
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise UpstreamError("the upstream's model list is not an OpenAI list (no data array)")
        return data

    def _events(self, lines: Sequence[str]) -> tuple[list[dict[str, Any]], bool, UpstreamError | None]:
        """The events of whole server-sent-event lines, whether ``data: [DONE]`` came, and the fault that stopped
        the reading (the events before it are kept)."""
        events: list[dict[str, Any]] = []
        for line in lines:
            if not line.startswith("data:"):
                continue  # comments, event names, blank separators
            payload = line[5:].strip()
            if payload == "[DONE]":
                return events, True, None
            try:
                event = json.loads(payload)
            except ValueError:
                return events, False, UpstreamError("the upstream streamed an event that is not JSON")
            if not isinstance(event, dict):
                return events, False, UpstreamError("the upstream streamed an event that is not an object")
            if "error" in event and "choices" not in event:
                said = event["error"].get("message", "") if isinstance(event["error"], dict) else ""
                return events, False, UpstreamError(f"the upstream failed mid-stream: {self._clean(str(said))}")
            events.append(event)
        return events, False, None

    async def stream(self, body: Mapping[str, Any]) -> AsyncGenerator[list[dict[str, Any]]]:
        """POST one streamed chat completion and yield its events (``chat.completion.chunk`` objects) as they
        arrive, those read together in one list (so that a relay writes them at once), ending at ``data: [DONE]``;
        UpstreamError for any fault, also after some events (a stream that ends without ``[DONE]`` is a fault: its
        answer may be cut)."""
        try:
            async with self.client.stream("POST", self.endpoint, json={**body, "stream": True}) as response:
                if response.status_code >= 400:
                    raise self._status_error(response, await response.aread())
                kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                if kind != "text/event-stream":
                    raise UpstreamError(f"the upstream did not stream (content type {kind or 'none'!r})")
                pending = ""
                async for text in _then_none(response.aiter_text()):
                    if text is None:  # the end: a last line without its line break
                        lines, pending = [pending], ""
                    else:
                        *lines, pending = _LINE_BREAK.split(pending + text)
                    events, done, fault = self._events(lines)
                    if events:
                        yield events
                    if fault is not None:
                        raise fault
                    if done:
                        return
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None
        raise UpstreamError("the upstream's stream ended without [DONE]")


async def _then_none(texts: AsyncIterator[str]) -> AsyncIterator[str | None]:
    """``texts``, then None."""
    async for text in texts:
        yield text
    yield None
