"""Tenant routes: rules (list, get, put, delete, bulk import, history) and matching. Thin adapters over norma.store.

Every route checks that the caller's key belongs to the tenant in the path (or is an admin key); another tenant's
routes answer 404, exactly as a tenant that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse

from norma.errors import ConflictError, InvalidInputError
from norma.matching import Rule, Scope
from norma.service._auth import Principal, require_tenant
from norma.service._bodies import StrictJsonRoute
from norma.service._schemas import (
    PROBLEM_RESPONSES,
    CalibrateRequest,
    CheckRequest,
    CheckResponse,
    GateResponse,
    MatchRequest,
    MatchResponse,
    Problem,
    RulebookBody,
    RuleHistory,
    RulesWritten,
    RuleWritten,
    TenantInfo,
    TenantRules,
)
from norma.service._state import ServiceState, get_state

__all__ = ["router"]

_CONFLICT = {"model": Problem, "description": "The body contradicts the path (a different rule id or tenant)"}
router = APIRouter(
    prefix="/v1/tenants/{tenant}",
    tags=["tenants"],
    responses={**PROBLEM_RESPONSES, 409: _CONFLICT},
    route_class=StrictJsonRoute,
)

TenantId = Annotated[str, Path(min_length=1, max_length=200, description="The tenant's id.")]
RuleId = Annotated[str, Path(min_length=1, max_length=200, description="The rule's id.")]
State = Annotated[ServiceState, Depends(get_state)]


async def tenant_caller(request: Request, tenant: TenantId, state: State) -> Principal:
    """The authenticated caller, if it may act for ``tenant`` (else 404)."""
    principal = await state.authenticate(request)
    require_tenant(principal, tenant)
    return principal


Caller = Annotated[Principal, Depends(tenant_caller)]


@router.get("", summary="The tenant's rule-set version and rule count")
async def tenant_info(tenant: TenantId, state: State, caller: Caller) -> TenantInfo:
    def work() -> TenantInfo:
        store = state.store
        return TenantInfo(tenant_id=tenant, version=store.version(tenant), rules=len(store.list_rules(tenant)))

    return await state.run(work)


@router.get("/rules", summary="List the tenant's rules (sorted by id), optionally filtered")
async def list_rules(
    tenant: TenantId,
    state: State,
    caller: Caller,
    scope: Annotated[Scope | None, Query()] = None,
    scenario_id: Annotated[str | None, Query(max_length=200)] = None,
    step_id: Annotated[str | None, Query(max_length=200)] = None,
    enabled: Annotated[bool | None, Query()] = None,
    tag: Annotated[str | None, Query(max_length=200)] = None,
) -> TenantRules:
    def work() -> TenantRules:
        store = state.store
        rules = store.list_rules(
            tenant, scope=scope, scenario_id=scenario_id, step_id=step_id, enabled=enabled, tag=tag
        )
        return TenantRules(tenant_id=tenant, version=store.version(tenant), rules=list(rules))

    return await state.run(work)


@router.post("/rules", summary="Insert or replace rules (a rulebook) in one transaction")
async def import_rules(tenant: TenantId, body: RulebookBody, state: State, caller: Caller) -> RulesWritten:
    """Bulk import: the whole rulebook is validated first and every bad rule reported (400, nothing written);
    then all rules are written atomically."""
    from norma.store import load_rulebook

    data = body.model_dump(exclude_none=True)
    book = await state.run(load_rulebook, data, tenant_id=tenant)
    version = await state.run(state.store.upsert_rules, tenant, list(book.rules), timeout=False)
    return RulesWritten(tenant_id=tenant, version=version, count=len(book.rules))


@router.get("/rules/{rule_id}", summary="One rule")
async def get_rule(tenant: TenantId, rule_id: RuleId, state: State, caller: Caller) -> Rule:
    return await state.run(state.store.get_rule, tenant, rule_id)


@router.put("/rules/{rule_id}", summary="Insert or replace one rule")
async def put_rule(
    tenant: TenantId, rule_id: RuleId, body: dict[str, Any], state: State, caller: Caller
) -> RuleWritten:
    """The body holds the rule's fields; its ``id`` (optional) must be the path's (409 otherwise)."""
    if body.get("id", rule_id) != rule_id:
        raise ConflictError(f"the body's rule id {body.get('id')!r} differs from the path's {rule_id!r}", location="id")
    if body.get("tenant_id") not in (None, tenant, "default"):
        raise ConflictError(f"the body's tenant_id differs from the path's {tenant!r}", location="tenant_id")
    rule = Rule.from_mapping({**body, "id": rule_id, "tenant_id": tenant})
    version = await state.run(state.store.upsert_rules, tenant, [rule], timeout=False)
    return RuleWritten(tenant_id=tenant, version=version, rule=rule)


@router.delete("/rules/{rule_id}", summary="Delete one rule (its history is kept)")
async def delete_rule(tenant: TenantId, rule_id: RuleId, state: State, caller: Caller) -> RulesWritten:
    version = await state.run(state.store.delete_rules, tenant, [rule_id], timeout=False)
    return RulesWritten(tenant_id=tenant, version=version, count=1)


@router.get("/rules/{rule_id}/history", summary="Every committed version of one rule, oldest first")
async def rule_history(tenant: TenantId, rule_id: RuleId, state: State, caller: Caller) -> RuleHistory:
    history = await state.run(state.store.history, tenant, rule_id)
    return RuleHistory(tenant_id=tenant, rule_id=rule_id, history=list(history))


@router.post(
    "/match",
    response_model=MatchResponse,
    summary="The tenant's rules that apply to a message, best first, with the score breakdown",
)
async def match(tenant: TenantId, body: MatchRequest, request: Request, state: State, caller: Caller) -> JSONResponse:
    """While the store is unreachable, the tenant's matcher as this replica last had it answers (for
    ``stale_for`` seconds after the store last confirmed it), with ``Norma-Stale-Since``."""
    if not body.message.strip():  # as the library, the CLI, /check and the MCP tools refuse it
        raise InvalidInputError("the message is empty", location="message", hint="give the text to match")

    def work() -> JSONResponse:
        rules = state.rules_of(tenant, request)  # its messages embedded with the concurrent requests' in one call
        matches = rules.match(body.message, body.session, explain=body.explain, tags=body.tags)
        content = {
            "tenant_id": tenant,
            "rules_version": rules.rules_version,
            "matches": [m.to_dict() for m in matches],
            "dropped": [d.to_dict() for d in getattr(matches, "dropped", ())],
            "gate": None if matches.gate is None else matches.gate.to_dict(),
        }
        return JSONResponse(content)  # the per-turn hot path: no second validation of what the library returned

    return await state.run(work)


@router.post(
    "/check",
    response_model=CheckResponse,
    summary="A turn checked: the rules that apply to the message, the output checked against each, a reward",
)
async def check(tenant: TenantId, body: CheckRequest, request: Request, state: State, caller: Caller) -> JSONResponse:
    """The tenant's matched rules' checks (and its ``when: always`` checks) on the output; ``judge`` checks ask the
    service's LLM (``$NORMA_LLM_URL``) and are skipped without one. Served from memory while the store is
    unreachable, as ``/match`` is."""

    def work() -> JSONResponse:
        rules = state.rules_of(tenant, request)
        report = rules.check(body.message, body.output, body.session, audit=body.audit)
        return JSONResponse({"tenant_id": tenant, **report.to_dict()})

    return await state.run(work)


@router.get("/gate", summary="The gate the tenant's matcher applies now")
async def get_gate(tenant: TenantId, state: State, caller: Caller) -> GateResponse:
    """The calibrated gate when one is stored, else the default: the rules that govern the message (confidence
    >= 0.7)."""

    def work() -> GateResponse:
        matcher = state.matchers.get(tenant)
        stored = state.store.load_gate(tenant)
        return GateResponse(
            tenant_id=tenant,
            version=state.store.version(tenant),
            calibrated=stored is not None,
            gate=matcher.gate().to_dict(),
        )

    return await state.run(work)


@router.post("/gate", summary="Calibrate the tenant's gate from labelled messages")
async def calibrate(tenant: TenantId, body: CalibrateRequest, state: State, caller: Caller) -> GateResponse:
    """Picks the similarity gate from messages with their expected rule ids (``dry_run``: only shows it) and stores
    it with the tenant's rules: every replica's matcher uses it from its next refresh."""
    from norma.matching import LabelledMessage, calibrate_gate

    def work() -> GateResponse:
        matcher = state.matchers.get(tenant)
        labelled = [
            LabelledMessage(message=m.message, expected=tuple(m.expected), scenario=m.scenario, step=m.step)
            for m in body.messages
        ]
        gate = calibrate_gate(
            matcher,
            labelled,
            target_precision=body.target_precision,
            target_recall=body.target_recall,
            best_f1=body.best_f1,
            source="messages",
            rules_version=state.store.version(tenant),
        )
        version = state.store.version(tenant) if body.dry_run else state.store.save_gate(tenant, gate.to_dict())
        return GateResponse(tenant_id=tenant, version=version, calibrated=not body.dry_run, gate=gate.to_dict())

    return await state.run(work, timeout=False)


@router.delete("/gate", summary="Remove the tenant's calibrated gate")
async def clear_gate(tenant: TenantId, state: State, caller: Caller) -> GateResponse:
    def work() -> GateResponse:
        version = state.store.save_gate(tenant, None)
        return GateResponse(tenant_id=tenant, version=version, calibrated=False, gate=None)

    return await state.run(work, timeout=False)
