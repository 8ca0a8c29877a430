"""The guarded endpoint's OpenAI framing: a guarded turn as a ``chat.completion`` object or as server-sent
``chat.completion.chunk`` events, a stream relayed as it arrives, an upstream fault as a gateway problem (502 or 504,
``Retry-After``), and a client that disconnects."""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio
from fastapi import Request
from fastapi.responses import JSONResponse

from norma.guard import GuardAction, GuardResult
from norma.llm import ChatDelta, ChatReply, LLMBackendError
from norma.service._errors import PROBLEM_MEDIA_TYPE

__all__ = [
    "DONE",
    "SSE_HEADERS",
    "chunks",
    "completion",
    "event",
    "gateway_problem",
    "problem_body",
    "relay",
    "unless_disconnected",
]

T = TypeVar("T")

DONE = b"data: [DONE]\n\n"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def problem_body(exc: LLMBackendError) -> dict[str, Any]:
    """The JSON problem (RFC 9457) of an upstream fault."""
    status, retry = exc.gateway_status, exc.gateway_retry_after
    title = "gateway timeout" if status == 504 else "bad gateway"
    body: dict[str, Any] = {
        "type": f"urn:norma:problem:{title.replace(' ', '-')}",
        "title": title,
        "status": status,
        "detail": exc.gateway_detail,
    }
    fault = exc.fault
    if fault is not None and fault.kind == "status":
        body["upstream_status"] = fault.status
    body["hint"] = "retry after the seconds in Retry-After" if retry is not None else "fix the request; as is it fails"
    return body


def gateway_problem(exc: LLMBackendError) -> JSONResponse:
    """An upstream fault as the guarded endpoint answers it."""
    retry = exc.gateway_retry_after
    headers = {} if retry is None else {"Retry-After": str(max(1, math.ceil(retry)))}
    return JSONResponse(problem_body(exc), exc.gateway_status, headers=headers, media_type=PROBLEM_MEDIA_TYPE)


def _summed_usage(replies: Sequence[ChatReply]) -> dict[str, Any] | None:
    usages = [(r.raw or {}).get("usage") for r in replies]
    if not usages or not all(isinstance(u, dict) for u in usages):
        return None
    if len(usages) == 1:
        return dict(usages[0])  # type: ignore[arg-type]  # as the upstream counted it, every field kept
    total: dict[str, Any] = {}
    for reply in replies:
        usage = reply.usage
        assert usage is not None
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            if isinstance(count := getattr(usage, key), int):
                total[key] = total.get(key, 0) + count
    return total


def completion(result: GuardResult, replies: Sequence[ChatReply]) -> dict[str, Any]:
    """The upstream's last answer with the guard's answer, the usage of every call and ``norma``."""
    data = dict(replies[-1].raw or {})
    choice = dict(data["choices"][0])
    if result.action is GuardAction.BLOCKED:
        choice["message"] = {"role": "assistant", "content": result.answer}
        choice["finish_reason"] = "content_filter"
    else:
        choice["message"] = {**choice["message"], "content": result.answer}
    data["choices"] = [choice]
    usage = _summed_usage(replies)
    if usage is not None:
        data["usage"] = usage
    data["norma"] = result.to_dict(answers=False)
    return data


def event(data: Mapping[str, Any]) -> bytes:
    """One server-sent event."""
    return b"data: " + json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"


def chunks(done: Mapping[str, Any], *, usage: bool) -> list[bytes]:
    """A checked completion as the events of a stream: the answer, the finish, ``norma``, ``[DONE]``."""
    head = {
        "id": done.get("id", "chatcmpl-norma"),
        "object": "chat.completion.chunk",
        "created": done.get("created", int(time.time())),
        "model": done.get("model", ""),
    }
    choice = done["choices"][0]
    content = choice["message"]["content"]
    events = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason") or "stop"}]},
    ]
    last: dict[str, Any] = {**head, "choices": [], "norma": done["norma"]}
    if usage and "usage" in done:
        last["usage"] = done["usage"]
    return [*(event(e) for e in events), event(last), DONE]


async def relay(
    first: ChatDelta,
    deltas: AsyncGenerator[ChatDelta],
    check: Callable[[str, float], Awaitable[GuardResult]],
    called: float,
) -> AsyncIterator[bytes]:
    """``flag`` with ``stream: true``: the upstream's events as they arrive (``first``, then ``deltas``), then
    ``norma`` (``check`` of the whole answer), then ``[DONE]``; a fault after the first event ends the stream with an
    ``error`` event and no ``[DONE]``: never a half answer that looks whole."""
    text: list[str] = []
    delta = first
    try:
        while True:
            text.append(delta.text)
            last = delta.events[-1]
            yield b"".join(event(e) for e in delta.events)  # the events that came together, in one write
            try:
                delta = await anext(deltas)
            except StopAsyncIteration:
                break
    except LLMBackendError as exc:
        yield event({"error": problem_body(exc)})
        return
    finally:
        await deltas.aclose()
    result = await check("".join(text), (time.perf_counter() - called) * 1000)
    head: dict[str, Any] = {k: last[k] for k in ("id", "created", "model") if k in last}
    norma = result.to_dict(answers=False)
    yield event({**head, "object": "chat.completion.chunk", "choices": [], "norma": norma}) + DONE


async def unless_disconnected(request: Request, work: Callable[[], Awaitable[T]]) -> tuple[T] | None:
    """``(await work(),)``, or None when the client disconnects first (``work`` is then cancelled: an upstream
    call in flight is abandoned and its connection closed)."""
    done: list[T] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            done.append(await work())
        except Exception as exc:  # raised as itself, not in an exception group
            failed.append(exc)
        group.cancel_scope.cancel()
    if failed:
        raise failed[0]
    return (done[0],) if done else None
