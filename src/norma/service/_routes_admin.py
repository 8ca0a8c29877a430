"""Admin routes: list tenants, create / list / revoke API keys. Only admin keys may call them (403 otherwise)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from norma.errors import ForbiddenError
from norma.service._auth import Principal
from norma.service._bodies import StrictJsonRoute
from norma.service._schemas import PROBLEM_RESPONSES, ApiKeyCreated, KeyList, KeyRequest, Problem, TenantList
from norma.service._state import ServiceState, get_state

__all__ = ["router"]

_FORBIDDEN = {"model": Problem, "description": "Needs an admin key"}
router = APIRouter(
    prefix="/v1", tags=["admin"], responses={**PROBLEM_RESPONSES, 403: _FORBIDDEN}, route_class=StrictJsonRoute
)

State = Annotated[ServiceState, Depends(get_state)]


async def admin_caller(request: Request, state: State) -> Principal:
    principal = await state.authenticate(request)
    if not principal.admin:
        raise ForbiddenError("this route needs an admin key")
    return principal


Admin = Annotated[Principal, Depends(admin_caller)]
TenantId = Annotated[str, Path(min_length=1, max_length=200)]


@router.get("/tenants", summary="Every tenant with committed rules")
async def list_tenants(state: State, admin: Admin) -> TenantList:
    return TenantList(tenants=await state.run(state.store.tenants))


@router.post("/tenants/{tenant}/keys", status_code=201, summary="Create an API key for a tenant (shown once)")
async def create_key(tenant: TenantId, state: State, admin: Admin, body: KeyRequest | None = None) -> ApiKeyCreated:
    name = body.name if body is not None else ""
    secret = await state.run(state.store.create_api_key, tenant, name=name, timeout=False)
    key = await state.run(state.store.check_api_key, secret)
    assert key is not None
    return ApiKeyCreated(key_id=key.key_id, tenant_id=key.tenant_id, name=key.name, secret=secret)


@router.get("/tenants/{tenant}/keys", summary="A tenant's API keys (never their secrets)")
async def list_keys(tenant: TenantId, state: State, admin: Admin) -> KeyList:
    keys = await state.run(state.store.list_api_keys, tenant)
    return KeyList(tenant_id=tenant, keys=list(keys))


@router.delete("/keys/{key_id}", status_code=204, summary="Revoke an API key for good")
async def revoke_key(key_id: Annotated[str, Path(max_length=64)], state: State, admin: Admin) -> Response:
    await state.run(state.store.revoke_api_key, key_id, timeout=False)
    return Response(status_code=204)
