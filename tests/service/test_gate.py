"""``/v1/tenants/{tenant}/gate``: the gate a tenant's matcher applies, calibrated from labelled messages over HTTP,
stored with the tenant's rules, and named in every ``/match`` answer."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from norma.store import RuleStore
from tests.service.conftest import bearer

pytestmark = pytest.mark.anyio

LABELLED = [
    {"message": "my wallet was stolen with my card in it", "expected": ["lost-card"]},
    {"message": "I want my money back for this order", "expected": ["refund"]},
    {"message": "hi there", "expected": ["greeting"]},
    {"message": "what time is the football match tonight", "expected": []},
]


async def _match_gate(client: httpx.AsyncClient, key: str) -> dict[str, object]:
    response = await client.post("/v1/tenants/acme/match", json={"message": "hello"}, headers=bearer(key))
    assert response.status_code == 200, response.text
    gate = response.json()["gate"]
    assert isinstance(gate, dict)
    return gate


async def test_the_gate_is_named_calibrated_stored_and_cleared(
    client: httpx.AsyncClient, store: RuleStore, acme_key: str
) -> None:
    now = await client.get("/v1/tenants/acme/gate", headers=bearer(acme_key))
    assert now.status_code == 200, now.text
    assert now.json()["calibrated"] is False
    assert now.json()["gate"]["kind"] == "confidence"  # 3 rules with a few examples: the same gate as any rulebook
    first = await _match_gate(client, acme_key)
    assert (first["kind"], first["score"], first["threshold"]) == ("confidence", "confidence", 0.7)
    assert str(first["description"]).startswith("confidence >= 0.7")

    body = {"messages": LABELLED, "target_precision": 1.0, "dry_run": True}
    dry = await client.post("/v1/tenants/acme/gate", json=body, headers=bearer(acme_key))
    assert dry.status_code == 200, dry.text
    assert dry.json()["calibrated"] is False
    assert dry.json()["gate"]["kind"] == "calibrated"
    assert store.load_gate("acme") is None  # a dry run stores nothing

    version = store.version("acme")
    stored = await client.post("/v1/tenants/acme/gate", json={**body, "dry_run": False}, headers=bearer(acme_key))
    assert stored.status_code == 200, stored.text
    assert stored.json()["version"] == version + 1
    gate = stored.json()["gate"]
    assert gate == dry.json()["gate"]  # deterministic
    assert gate["terms"]["precision"] == 1.0
    assert gate["terms"]["messages"] == 4
    assert (gate["terms"]["target"], gate["terms"]["goal"]) == ("precision", 1.0)
    assert store.load_gate("acme") == gate
    deadline = time.monotonic() + 10
    while (await _match_gate(client, acme_key))["kind"] != "calibrated":  # the matcher refreshes on its interval
        assert time.monotonic() < deadline, "the matcher never picked up the calibrated gate"
        await asyncio.sleep(0.2)
    assert (await _match_gate(client, acme_key))["threshold"] == gate["threshold"]

    cleared = await client.delete("/v1/tenants/acme/gate", headers=bearer(acme_key))
    assert cleared.status_code == 200
    assert cleared.json() == {
        "tenant_id": "acme",
        "version": version + 2,
        "calibrated": False,
        "gate": None,
    }
    assert store.load_gate("acme") is None


async def test_a_calibration_without_a_target_is_balanced(client: httpx.AsyncClient, acme_key: str) -> None:
    headers = bearer(acme_key)
    body = {"messages": LABELLED, "dry_run": True}
    balanced = await client.post("/v1/tenants/acme/gate", json=body, headers=headers)
    assert balanced.status_code == 200, balanced.text
    gate = balanced.json()["gate"]
    assert gate["terms"]["target"] == "balanced"
    assert (gate["kind"], gate["score"], gate["threshold"]) == ("calibrated", "confidence", 0.7)  # the default gate
    assert gate["terms"]["expecting_none"] == 1
    assert set(gate["terms"]["confidence"]) >= {"scale", "shift"}  # on the confidence refitted to the messages
    f1 = await client.post("/v1/tenants/acme/gate", json={**body, "best_f1": True}, headers=headers)
    assert f1.status_code == 200, f1.text
    assert f1.json()["gate"]["terms"]["target"] == "best_f1"


async def test_bad_calibration_requests_are_4xx(client: httpx.AsyncClient, acme_key: str, globex_key: str) -> None:
    headers = bearer(acme_key)
    empty = await client.post("/v1/tenants/acme/gate", json={"messages": []}, headers=headers)
    assert empty.status_code == 422
    ghost = {"messages": [{"message": "hi", "expected": ["ghost"]}]}
    unknown = await client.post("/v1/tenants/acme/gate", json=ghost, headers=headers)
    assert unknown.status_code == 400
    assert "unknown rule" in unknown.json()["detail"]
    both = {"messages": LABELLED, "target_precision": 0.9, "target_recall": 0.9}
    assert (await client.post("/v1/tenants/acme/gate", json=both, headers=headers)).status_code == 400
    one_sided = await client.post("/v1/tenants/acme/gate", json={"messages": LABELLED[:3]}, headers=headers)
    assert one_sided.status_code == 400
    assert "needs messages that expect no rule" in one_sided.json()["detail"]
    two = {"messages": LABELLED, "target_recall": 0.9, "best_f1": True}
    assert (await client.post("/v1/tenants/acme/gate", json=two, headers=headers)).status_code == 400
    other = await client.post("/v1/tenants/acme/gate", json={"messages": LABELLED}, headers=bearer(globex_key))
    assert other.status_code == 404  # another tenant's key: as if the tenant did not exist


async def test_the_gate_quantile_is_gone(client: httpx.AsyncClient, store: RuleStore, acme_key: str) -> None:
    headers = bearer(acme_key)
    wrong = await client.post("/v1/tenants/acme/match", json={"message": "hi", "gate_quantile": 0.2}, headers=headers)
    assert wrong.status_code == 422  # an unknown field
    # a tenant no longer stores a gate quantile: the route is gone
    put = await client.put("/v1/tenants/acme/gate", json={"gate_quantile": 0.05}, headers=headers)
    assert put.status_code == 405
    assert store.load_gate("acme") is None
