"""The guarded endpoint: ``POST /v1/tenants/{tenant}/chat/completions``, OpenAI-compatible, forwarding to the
upstream of ``norma serve --upstream URL`` (an OpenAI client changes only its base URL to
``http://host/v1/tenants/{tenant}``).

One turn: the tenant's rules are matched on the last user message (and ``norma.session``) and the rules that govern
the turn are added to the system message (:meth:`norma.guard.Guard.prepare`, in a worker thread); the upstream
answers; the turn check reviews the answer; by policy the answer is repaired (the upstream asked again with the
failed checks, at most ``guard_max_repairs`` times, then blocked), blocked (the fallback answer,
``finish_reason: content_filter``) or flagged. The answer is the upstream's last response with its text replaced by
the guard's answer, a ``norma`` object (the report, the rules injected, the attempts without their texts) and the
headers ``Norma-Verdict`` and ``Norma-Action``.

``stream: true``: in ``repair`` and ``block`` the upstream is called without streaming and nothing is sent before
the answer is checked; then the final answer goes out as ``chat.completion.chunk`` events, a last event with
``norma`` and ``data: [DONE]``. In ``flag`` the upstream's events are passed on as they arrive, then one event with
``norma`` (the verdict of the whole answer), then ``[DONE]``; the headers go before the verdict is known, so
they carry neither ``Norma-Verdict`` nor ``Norma-Action`` (the last event does). A stream that fails after its
first event ends with an ``error`` event and no ``[DONE]``: never a half answer that looks whole.

A client that disconnects cancels the turn: the upstream call is abandoned (its connection closed) and nothing more
is done.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from norma.guard import Guard, GuardAction, GuardAttempt, GuardPolicy, GuardResult, Prepared, finished
from norma.service._bodies import StrictJsonRoute
from norma.service._chat_schemas import ChatCompletionRequest, GuardedChatCompletion, UpstreamModels
from norma.service._errors import PROBLEM_MEDIA_TYPE, problem_response
from norma.service._routes_tenants import Caller, TenantId
from norma.service._schemas import PROBLEM_RESPONSES, Problem
from norma.service._state import ServiceState, get_state
from norma.service._upstream import Upstream, UpstreamError, answer_text

if TYPE_CHECKING:
    from norma.service._settings import ServiceSettings

__all__ = ["VERDICT_HEADER", "ACTION_HEADER", "install", "router"]

VERDICT_HEADER = "Norma-Verdict"
"""``pass``, ``fail`` or ``skip``: the turn check of the last answer the upstream gave."""
ACTION_HEADER = "Norma-Action"
"""``passed``, ``repaired``, ``blocked`` or ``flagged`` (not on a stream passed on as it arrives: see above)."""
_UPSTREAM_STATE = "norma_upstream"
_DROP = ("stream", "stream_options", "norma")
"""Fields not sent as they came: a checked answer is fetched whole; ``norma`` is norma's."""

T = TypeVar("T")

_GATEWAY: dict[int | str, dict[str, Any]] = {
    502: {"model": Problem, "description": "The upstream is down, answered an error status or garbage"},
    504: {"model": Problem, "description": "The upstream did not answer within --upstream-timeout"},
}
router = APIRouter(
    prefix="/v1/tenants/{tenant}",
    tags=["guarded chat"],
    responses={**PROBLEM_RESPONSES, **_GATEWAY},
    route_class=StrictJsonRoute,
)
State = Annotated[ServiceState, Depends(get_state)]


def install(app: FastAPI, settings: ServiceSettings) -> None:
    """Add the guarded endpoint to ``app``: the route, the upstream of ``settings`` (its client closed on the app's
    shutdown) and the problem answers of upstream faults."""
    upstream = (
        Upstream(settings.upstream_url, settings.upstream_api_key, settings.upstream_timeout)
        if settings.upstream_url
        else None
    )
    setattr(app.state, _UPSTREAM_STATE, upstream)
    app.include_router(router)

    async def on_upstream(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, UpstreamError)
        return _problem(exc)

    app.add_exception_handler(UpstreamError, on_upstream)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app_: Any) -> AsyncIterator[Any]:
        async with inner(app_) as maybe_state:
            try:
                yield maybe_state
            finally:
                if upstream is not None:
                    await upstream.aclose()

    app.router.lifespan_context = lifespan


def _problem(exc: UpstreamError) -> Response:
    return JSONResponse(exc.problem(), status_code=exc.status, headers=exc.headers(), media_type=PROBLEM_MEDIA_TYPE)


def _no_upstream() -> Response:
    """The 503 of a server started without ``--upstream``: it says so (the option's name is no secret), unlike the
    general words of other configuration errors, so that a client (the playground) can say what to do."""
    return problem_response(
        503,
        "no model is configured: the guarded endpoint has no upstream",
        hint="start norma serve with --upstream URL (or NORMA_UPSTREAM_URL); `norma docs guard` explains it",
        headers={"Retry-After": "1"},
    )


async def _unless_disconnected(request: Request, work: Callable[[], Awaitable[T]]) -> tuple[T] | None:
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


def _sent(messages: Sequence[Mapping[str, Any]], prepared: Prepared) -> list[dict[str, Any]]:
    """The client's messages (their other fields kept) with the system message the guard wrote."""
    sent = [dict(m) for m in messages]
    if len(prepared.messages) == len(sent) + 1:
        sent.insert(0, dict(prepared.messages[0]))
    elif prepared.rules:
        sent[0] = {**sent[0], "content": prepared.messages[0]["content"]}
    return sent


def _headers(result: GuardResult) -> dict[str, str]:
    return {VERDICT_HEADER: result.report.verdict.value, ACTION_HEADER: result.action.value}


def _summed_usage(responses: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    usages = [r.get("usage") for r in responses]
    if not usages or not all(isinstance(u, dict) for u in usages):
        return None
    if len(usages) == 1:
        return dict(usages[0])  # type: ignore[arg-type]
    total: dict[str, Any] = {}
    for usage in usages:
        assert isinstance(usage, dict)
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            if isinstance(usage.get(key), int):
                total[key] = total.get(key, 0) + usage[key]
    return total


def _completion(result: GuardResult, responses: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The upstream's last response with the guard's answer, the usage of every call and ``norma``."""
    data = dict(responses[-1])
    choice = dict(data["choices"][0])
    if result.action is GuardAction.BLOCKED:
        choice["message"] = {"role": "assistant", "content": result.answer}
        choice["finish_reason"] = "content_filter"
    else:
        choice["message"] = {**choice["message"], "content": result.answer}
    data["choices"] = [choice]
    usage = _summed_usage(responses)
    if usage is not None:
        data["usage"] = usage
    data["norma"] = result.to_dict(answers=False)
    return data


def _event(data: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode() + b"\n\n"


_DONE = b"data: [DONE]\n\n"
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _chunks(completion: Mapping[str, Any], *, usage: bool) -> list[bytes]:
    """A checked completion as the events of a stream: the answer, the finish, ``norma``, ``[DONE]``."""
    head = {
        "id": completion.get("id", "chatcmpl-norma"),
        "object": "chat.completion.chunk",
        "created": completion.get("created", int(time.time())),
        "model": completion.get("model", ""),
    }
    choice = completion["choices"][0]
    content = choice["message"]["content"]
    events = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason") or "stop"}]},
    ]
    last: dict[str, Any] = {**head, "choices": [], "norma": completion["norma"]}
    if usage and "usage" in completion:
        last["usage"] = completion["usage"]
    return [*(_event(e) for e in events), _event(last), _DONE]


@router.post(
    "/chat/completions",
    summary="A guarded chat completion (OpenAI-compatible): the rules in the prompt, the answer checked",
    response_model=None,
    responses={
        200: {
            "description": "The upstream's chat completion with the checked answer, a `norma` object and the "
            "headers Norma-Verdict and Norma-Action; with `stream: true`, server-sent events",
            "model": GuardedChatCompletion,
            "content": {"text/event-stream": {}},
        }
    },
)
async def chat_completions(
    tenant: TenantId, body: ChatCompletionRequest, request: Request, state: State, caller: Caller
) -> Response:
    """An OpenAI client pointed at ``/v1/tenants/{tenant}`` (its base URL) gets the upstream's answers, guarded by
    the tenant's rules: see docs/service.md (policies, streaming, faults)."""
    upstream = getattr(request.app.state, _UPSTREAM_STATE, None)
    if not isinstance(upstream, Upstream):
        return _no_upstream()
    started = time.perf_counter()
    options = body.norma
    policy = (options.policy if options is not None else None) or state.settings.guard_policy
    session = options.session if options is not None else None
    sent = body.model_dump(exclude_unset=True)
    base = {k: v for k, v in sent.items() if k not in _DROP}

    def prepare() -> tuple[Guard, Prepared]:
        rules = state.rules_of(tenant, request)
        guard = Guard(rules, None, policy=policy, max_repairs=state.settings.guard_max_repairs)
        return guard, guard.prepare(body.messages, session)

    guard, prepared = await state.run(prepare)
    messages = _sent(body.messages, prepared)
    if body.stream and policy is GuardPolicy.FLAG:
        return await _pass_through(request, state, upstream, guard, prepared, {**base, "messages": messages}, started)

    async def turn() -> tuple[GuardResult, list[dict[str, Any]]]:
        responses: list[dict[str, Any]] = []
        steps = guard.turn(prepared, started)  # the guard's one loop: this drives it over the upstream
        added = next(steps)
        while True:
            called = time.perf_counter()
            data = await upstream.complete({**base, "messages": messages + added})
            responses.append(data)
            attempt = await _attempt(state, guard, prepared, answer_text(data), (time.perf_counter() - called) * 1000)
            try:
                added = steps.send(attempt)
            except StopIteration as done:
                return finished(done), responses

    done = await _unless_disconnected(request, turn)
    if done is None:
        return Response(status_code=499)  # nobody is left to answer
    result, responses = done[0]
    completion = _completion(result, responses)
    if not body.stream:
        return JSONResponse(completion, headers=_headers(result))
    usage = isinstance(sent.get("stream_options"), dict) and bool(sent["stream_options"].get("include_usage"))
    chunks = _chunks(completion, usage=usage)

    async def replay() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return StreamingResponse(replay(), media_type="text/event-stream", headers={**_SSE_HEADERS, **_headers(result)})


@router.get(
    "/models",
    summary="The upstream's models (OpenAI's GET /models), for clients that list them first",
    response_model=None,
    responses={200: {"description": "The upstream's model list, as it sent it", "model": UpstreamModels}},
)
async def models(tenant: TenantId, request: Request, caller: Caller) -> Response:
    """An OpenAI client pointed at ``/v1/tenants/{tenant}`` that lists models (``client.models.list()``) gets the
    upstream's list; 503 without an upstream (how the playground learns it before a turn is sent)."""
    upstream = getattr(request.app.state, _UPSTREAM_STATE, None)
    if not isinstance(upstream, Upstream):
        return _no_upstream()
    return JSONResponse(await upstream.models())


async def _pass_through(
    request: Request,
    state: ServiceState,
    upstream: Upstream,
    guard: Guard,
    prepared: Prepared,
    body: dict[str, Any],
    started: float,
) -> Response:
    """``flag`` with ``stream: true``: the upstream's events as they arrive, then ``norma``, then ``[DONE]``."""
    called = time.perf_counter()
    events = upstream.stream(body)

    async def opening() -> list[dict[str, Any]]:
        try:
            return await events.__anext__()
        except StopAsyncIteration:
            raise UpstreamError("the upstream's stream had no events") from None

    first = await _unless_disconnected(request, opening)  # a fault before any event: a problem answer
    if first is None:
        await events.aclose()
        return Response(status_code=499)

    async def relay() -> AsyncIterator[bytes]:
        text: list[str] = []
        last: Mapping[str, Any] = first[0][-1]
        try:
            batch: list[dict[str, Any]] = first[0]
            while True:
                text.extend(_delta_text(event) for event in batch)
                last = batch[-1]
                yield b"".join(_event(event) for event in batch)  # the events that came together, in one write
                try:
                    batch = await events.__anext__()
                except StopAsyncIteration:
                    break
        except UpstreamError as exc:
            yield _event({"error": exc.problem()})  # no [DONE]: the answer is not whole
            return
        finally:
            await events.aclose()
        steps = guard.turn(prepared, started)
        next(steps)
        attempt = await _attempt(state, guard, prepared, "".join(text), (time.perf_counter() - called) * 1000)
        try:
            steps.send(attempt)
            raise AssertionError("flag never asks the model again")
        except StopIteration as done:
            result = finished(done)
        head: dict[str, Any] = {k: last[k] for k in ("id", "created", "model") if k in last}
        yield (
            _event({**head, "object": "chat.completion.chunk", "choices": [], "norma": result.to_dict(answers=False)})
            + _DONE
        )

    return StreamingResponse(relay(), media_type="text/event-stream", headers=_SSE_HEADERS)


async def _attempt(state: ServiceState, guard: Guard, prepared: Prepared, answer: str, model_ms: float) -> GuardAttempt:
    """An answer checked (:meth:`Guard.attempt`): in the event loop when no judge can be asked (the checks are then a
    computation of well under a millisecond, less than a worker thread's round trip), else in a worker thread."""
    if state.judge() is None:
        return guard.attempt(prepared, answer, model_ms)
    return await state.run(guard.attempt, prepared, answer, model_ms)


def _delta_text(event: Mapping[str, Any]) -> str:
    """The text an event adds to the first choice's answer."""
    for choice in event.get("choices") or ():
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            return content if isinstance(content, str) else ""
    return ""
