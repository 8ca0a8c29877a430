"""The guarded endpoint: ``POST /v1/tenants/{tenant}/chat/completions``, OpenAI-compatible, forwarding to the
upstream of ``norma serve --upstream URL`` (:attr:`ServiceState.upstream <norma.service._state.ServiceState>`).

A turn: the tenant's rules (:meth:`ServiceState.rules_of`) and :meth:`Guard.prepare <norma.guard.Guard.prepare>` in a
worker thread, then the guard's one loop (:meth:`Guard.turn <norma.guard.Guard.turn>`) driven over the upstream, then
OpenAI framing (``_chat_frames``). ``stream: true`` in ``flag`` relays the upstream's events as they arrive and checks
the whole answer at the end; in ``repair`` and ``block`` nothing is sent before the answer is checked. A client that
disconnects cancels the turn. docs/service.md tells it from outside.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

import norma.service._chat_frames as frames
from norma.guard import Guard, GuardAttempt, GuardPolicy, GuardResult, Prepared, finished
from norma.llm import ChatReply, LLMBackendError, OpenAIClient
from norma.service._bodies import StrictJsonRoute
from norma.service._chat_schemas import ChatCompletionRequest, GuardedChatCompletion, UpstreamModels
from norma.service._errors import problem_response
from norma.service._routes_tenants import Caller, TenantId
from norma.service._schemas import PROBLEM_RESPONSES, Problem
from norma.service._state import ServiceState, get_state

__all__ = ["VERDICT_HEADER", "ACTION_HEADER", "router"]

VERDICT_HEADER = "Norma-Verdict"
"""``pass``, ``fail`` or ``skip``: the turn check of the last answer the upstream gave."""
ACTION_HEADER = "Norma-Action"
"""``passed``, ``repaired``, ``blocked`` or ``flagged`` (not on a stream passed on as it arrives: see above)."""
_DROP = ("stream", "stream_options", "norma", "messages")
"""Fields not sent as they came: a checked answer is fetched whole; ``norma`` is norma's; the messages get the rules."""

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


def _upstream(state: ServiceState) -> OpenAIClient:
    """The upstream, or the 503 of a server started without ``--upstream``: it says so (the option's name is no
    secret), so that a client (the playground) can say what to do."""
    if state.upstream is None:
        raise _Answer(
            problem_response(
                503,
                "no model is configured: the guarded endpoint has no upstream",
                hint="start norma serve with --upstream URL (or NORMA_UPSTREAM_URL); `norma docs guard` explains it",
                headers={"Retry-After": "1"},
            )
        )
    return state.upstream


class _Answer(Exception):
    """What the route answers at once (a problem)."""

    def __init__(self, response: Response) -> None:
        self.response = response


def _headers(result: GuardResult) -> dict[str, str]:
    return {VERDICT_HEADER: result.report.verdict.value, ACTION_HEADER: result.action.value}


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
    try:
        upstream = _upstream(state)
        started = time.perf_counter()
        options = body.norma
        policy = (options.policy if options is not None else None) or state.settings.guard_policy
        sent = body.model_dump(exclude_unset=True)
        fields = {k: v for k, v in sent.items() if k not in _DROP}

        def prepare() -> tuple[Guard, Prepared]:
            rules = state.rules_of(tenant, request)
            guard = Guard(rules, None, policy=policy, max_repairs=state.settings.guard_max_repairs)
            return guard, guard.prepare(body.messages, options.session if options is not None else None)

        guard, prepared = await state.run(prepare)
        messages = prepared.with_rules(body.messages)
        if body.stream and policy is GuardPolicy.FLAG:
            called, deltas = time.perf_counter(), upstream.astream(messages, request=fields)
            first = await frames.unless_disconnected(request, lambda: _ask(anext(deltas)))  # a fault: a problem
            if first is None:
                await deltas.aclose()
                return Response(status_code=499)

            async def check(answer: str, model_ms: float) -> GuardResult:
                steps = guard.turn(prepared, started)
                next(steps)
                try:
                    steps.send(await _attempt(state, guard, prepared, answer, model_ms))
                except StopIteration as done:
                    return finished(done)
                raise AssertionError("flag never asks the model again")

            relay = frames.relay(first[0], deltas, check, called)
            return StreamingResponse(relay, media_type="text/event-stream", headers=frames.SSE_HEADERS)

        async def turn() -> tuple[GuardResult, list[ChatReply]]:
            replies: list[ChatReply] = []
            steps = guard.turn(prepared, started)  # the guard's one loop: this drives it over the upstream
            added = next(steps)
            while True:
                called = time.perf_counter()
                reply = await _ask(upstream.acomplete(messages + added, request=fields))
                replies.append(reply)
                attempt = await _attempt(state, guard, prepared, reply.content, (time.perf_counter() - called) * 1000)
                try:
                    added = steps.send(attempt)
                except StopIteration as done:
                    return finished(done), replies

        done = await frames.unless_disconnected(request, turn)
    except _Answer as answer:
        return answer.response
    if done is None:
        return Response(status_code=499)  # nobody is left to answer
    result, replies = done[0]
    completion = frames.completion(result, replies)
    if not body.stream:
        return JSONResponse(completion, headers=_headers(result))
    usage = isinstance(sent.get("stream_options"), dict) and bool(sent["stream_options"].get("include_usage"))
    chunks = frames.chunks(completion, usage=usage)

    async def replay() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    headers = {**frames.SSE_HEADERS, **_headers(result)}
    return StreamingResponse(replay(), media_type="text/event-stream", headers=headers)


async def _ask(call: Awaitable[T]) -> T:
    """The upstream's answer; its fault answered at once as a gateway problem."""
    try:
        return await call
    except LLMBackendError as exc:
        raise _Answer(frames.gateway_problem(exc)) from None


@router.get(
    "/models",
    summary="The upstream's models (OpenAI's GET /models), for clients that list them first",
    response_model=None,
    responses={200: {"description": "The upstream's model list, as it sent it", "model": UpstreamModels}},
)
async def models(tenant: TenantId, request: Request, state: State, caller: Caller) -> Response:
    """An OpenAI client pointed at ``/v1/tenants/{tenant}`` that lists models (``client.models.list()``) gets the
    upstream's list; 503 without an upstream (how the playground learns it before a turn is sent)."""
    try:
        return JSONResponse(await _ask(_upstream(state).amodels()))
    except _Answer as answer:
        return answer.response


async def _attempt(state: ServiceState, guard: Guard, prepared: Prepared, answer: str, model_ms: float) -> GuardAttempt:
    """An answer checked (:meth:`Guard.attempt`): in the event loop when no judge can be asked (the checks are then a
    computation of well under a millisecond, less than a worker thread's round trip), else in a worker thread."""
    if state.judge() is None:
        return guard.attempt(prepared, answer, model_ms)
    return await state.run(guard.attempt, prepared, answer, model_ms)
