"""LiteLLM's Generic Guardrail API: ``POST /beta/litellm_basic_guardrail_api``, norma as a guardrail of a LiteLLM
proxy (``guardrail: generic_guardrail_api``, ``api_base`` this server). A thin adapter over :class:`norma.guard.Guard`.

The tenant is the API key's: LiteLLM sends its guardrail ``api_key`` as ``x-api-key`` (``Authorization: Bearer``
works too). An admin key has no tenant and is refused (403).

Pre-call (``input_type: request``): the user's message (the last ``user`` row of ``structured_messages``, else the
last of ``texts``) is matched against the tenant's rules and remembered by ``litellm_call_id`` (per tenant, at most
:data:`REMEMBERED_CALLS`, for :data:`REMEMBER_SECONDS`). An enforced match of a rule tagged ``block`` stops
the call: ``BLOCKED``, the rule in the reason. With ``inject_rules: true`` among the guardrail's
``additional_provider_specific_params``, the rules that govern the turn (:meth:`Guard.injected`) are added to the
request: ``GUARDRAIL_INTERVENED`` with the same ``texts``, the rules block (the guard's template) appended to the
system message's text when one is in the request's scope, else put before the user's message. Else ``NONE``.

Post-call (``input_type: response``): each text of the answer gets the turn check against the remembered message's
match (not matched again). A call not remembered (a post-call-only guardrail, another worker, expired) is checked
against the request's ``structured_messages`` when sent, else against nothing: only the rules with ``when: always``
checks apply. Failing under ``fail_on`` (``error`` by default; ``warning`` in the params) answers ``BLOCKED``, the
failed checks (``[rule/check] message``) in the reason; else ``NONE``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field

from norma.errors import ForbiddenError, InvalidInputError
from norma.guard import Guard, Prepared
from norma.rules import FailOn
from norma.service._auth import Principal
from norma.service._bodies import StrictJsonRoute
from norma.service._recall import ExpiringStore
from norma.service._schemas import PROBLEM_RESPONSES
from norma.service._state import ServiceState, get_state

__all__ = [
    "PATH",
    "REMEMBERED_CALLS",
    "REMEMBER_SECONDS",
    "GuardrailRequest",
    "GuardrailResponse",
    "router",
]

PATH = "/beta/litellm_basic_guardrail_api"
"""The path LiteLLM appends to the guardrail's ``api_base``."""
"""A rule with this tag, matched and enforced on the user's message, stops the call before the model runs."""
REMEMBERED_CALLS = 10_000
"""How many pre-call matches a worker remembers at once (the least recently stored are forgotten first)."""
REMEMBER_SECONDS = 600.0
"""How long a pre-call match is remembered for its post-call."""
_MAX_REASON_FAILURES = 20

router = APIRouter(tags=["litellm"], responses=PROBLEM_RESPONSES, route_class=StrictJsonRoute)
State = Annotated[ServiceState, Depends(get_state)]


class GuardrailRequest(BaseModel):
    """What LiteLLM sends (``GenericGuardrailAPIRequest``): fields norma does not use are accepted and ignored, and
    so are fields a later LiteLLM adds."""

    model_config = ConfigDict(extra="ignore")

    input_type: Literal["request", "response"]
    """``request``: the call's input, before the model; ``response``: the model's answer."""
    litellm_call_id: str | None = Field(default=None, max_length=200)
    """The call's id, the same in its pre-call and post-call."""
    litellm_trace_id: str | None = None
    texts: list[str] | None = None
    """The texts of the request's messages (in order), or of the answer's choices."""
    structured_messages: list[dict[str, Any]] | None = None
    """The request's chat messages in the guardrail's scope (OpenAI format)."""
    images: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    request_data: dict[str, Any] | None = None
    request_headers: dict[str, str] | None = None
    litellm_version: str | None = None
    model: str | None = None
    additional_provider_specific_params: dict[str, Any] | None = None
    """The guardrail's ``additional_provider_specific_params`` (and a request's dynamic ones): norma reads
    ``inject_rules`` (bool) and ``fail_on`` (``error`` or ``warning``)."""


class GuardrailResponse(BaseModel):
    """What LiteLLM reads (``GenericGuardrailAPIResponse``)."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["NONE", "BLOCKED", "GUARDRAIL_INTERVENED"]
    blocked_reason: str | None = None
    """Why the call is blocked (``BLOCKED`` only): LiteLLM answers its client with it."""
    texts: list[str] | None = None
    """The request's texts with the rules added (``GUARDRAIL_INTERVENED`` only), as many as were sent."""


_NONE = GuardrailResponse(action="NONE")


class _Options(BaseModel):
    """norma's keys of ``additional_provider_specific_params`` (other keys are left to other guardrails)."""

    model_config = ConfigDict(extra="ignore")

    inject_rules: bool = False
    fail_on: FailOn = FailOn.ERROR


async def tenant_of(request: Request, state: State) -> str:
    """The tenant of the caller's key; ForbiddenError for an admin key (it has no tenant)."""
    principal: Principal = await state.authenticate(request)
    if principal.tenant_id is None:
        raise ForbiddenError(
            "an admin key has no tenant to guard with",
            location="headers.x-api-key",
            hint="give the LiteLLM guardrail a tenant's key (`norma keys create --tenant T`) as its api_key",
        )
    return principal.tenant_id


Tenant = Annotated[str, Depends(tenant_of)]


def _recall(request: Request) -> ExpiringStore[tuple[str, str], Prepared]:
    """The app's remembered pre-calls, by (tenant, call id), made on first use."""
    app_state = request.app.state
    store: ExpiringStore[tuple[str, str], Prepared] | None = getattr(app_state, "litellm_calls", None)
    if store is None:
        store = app_state.litellm_calls = ExpiringStore(REMEMBERED_CALLS, REMEMBER_SECONDS)
    return store


def _options(body: GuardrailRequest) -> _Options:
    try:
        return _Options.model_validate(body.additional_provider_specific_params or {})
    except ValueError as exc:
        raise InvalidInputError(
            f"bad norma options in additional_provider_specific_params: {exc}",
            location="body.additional_provider_specific_params",
            hint="inject_rules: true or false; fail_on: error or warning",
        ) from None


def _text_slots(message: Mapping[str, Any]) -> list[str]:
    """The texts LiteLLM extracts from one chat message: a string content, or each list part's ``text``."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part["text"] for part in content if isinstance(part, Mapping) and isinstance(part.get("text"), str)]
    return []


def _last_user_row(messages: Sequence[Mapping[str, Any]] | None) -> str | None:
    """The texts of the last ``user`` row of ``messages``, joined; None when there is none."""
    for message in reversed(messages or []):
        if message.get("role") == "user":
            return "\n".join(_text_slots(message))
    return None


def _user_message(body: GuardrailRequest) -> str | None:
    """The user's message: the last ``user`` row of ``structured_messages``, else the last of ``texts``."""
    found = _last_user_row(body.structured_messages)
    if found is None and body.texts:
        found = body.texts[-1]
    return found


def _with_rules(body: GuardrailRequest, block: str) -> list[str]:
    """``texts`` with the rules block added to the system message's text when one is in scope (and the texts line
    up with the messages), else before the user's message (the last user row's last text, else the last text)."""
    texts = list(body.texts or [])
    messages = body.structured_messages or []
    slots = [(message.get("role"), len(_text_slots(message))) for message in messages]
    if messages and sum(count for _, count in slots) == len(texts):
        index, system, user = 0, None, None
        for role, count in slots:
            if count and role in ("system", "developer") and system is None:
                system = index + count - 1
            if count and role == "user":
                user = index + count - 1
            index += count
        if system is not None:
            texts[system] = f"{texts[system].rstrip()}\n\n{block}"
            return texts
        if user is not None:
            texts[user] = f"{block}\n\n{texts[user]}"
            return texts
    texts[-1] = f"{block}\n\n{texts[-1]}"
    return texts


def _pre_call(
    guard: Guard, body: GuardrailRequest, message: str, options: _Options
) -> tuple[Prepared, GuardrailResponse]:
    prepared = guard.prepare([{"role": "user", "content": message}])
    blocking = prepared.blocking()
    if blocking:
        rule = blocking[0]
        what = " ".join((rule.action_text or rule.condition_text).split())
        return prepared, GuardrailResponse(
            action="BLOCKED", blocked_reason=f"norma: the message matches rule [{rule.id}], which blocks it: {what}"
        )
    if options.inject_rules and prepared.block and body.texts:
        return prepared, GuardrailResponse(action="GUARDRAIL_INTERVENED", texts=_with_rules(body, prepared.block))
    return prepared, _NONE


def _post_call(guard: Guard, body: GuardrailRequest, prepared: Prepared | None) -> GuardrailResponse:
    if prepared is None:  # no pre-call remembered: match the message now (the texts are the answer here)
        prepared = guard.prepare([{"role": "user", "content": _last_user_row(body.structured_messages) or ""}])
    failed: list[str] = []
    for text in body.texts or []:
        report = guard.review(prepared, text)
        if guard.fails(report):
            failed += [line for line in guard.failures(report) or ["the turn check failed"] if line not in failed]
    if not failed:
        return _NONE
    shown = failed[:_MAX_REASON_FAILURES]
    more = f"; and {len(failed) - len(shown)} more" if len(failed) > len(shown) else ""
    return GuardrailResponse(
        action="BLOCKED", blocked_reason=f"norma: the answer fails the turn check: {'; '.join(shown)}{more}"
    )


@router.post(
    PATH,
    response_model=GuardrailResponse,
    response_model_exclude_none=True,
    summary="LiteLLM's Generic Guardrail API: the tenant's rules on a call's input (pre-call) or answer (post-call)",
)
async def litellm_guardrail(
    body: GuardrailRequest, request: Request, state: State, tenant: Tenant
) -> GuardrailResponse:
    """Pre-call: match the user's message, remember it by ``litellm_call_id``, block on a rule tagged ``block``, add
    the rules with ``inject_rules``. Post-call: the turn check of the answer (see the module docs)."""
    options = _options(body)
    recall = _recall(request)
    key = (tenant, body.litellm_call_id) if body.litellm_call_id else None

    def work() -> GuardrailResponse:
        guard = Guard(state.rules_of(tenant, request), fail_on=options.fail_on)
        if body.input_type == "request":
            message = _user_message(body)
            if message is None or not message.strip():
                return _NONE  # nothing for norma to read (tool calls or images only)
            prepared, answer = _pre_call(guard, body, message, options)
            if key is not None:
                recall.put(key, prepared)
            return answer
        return _post_call(guard, body, recall.get(key) if key is not None else None)

    return await state.run(work)
