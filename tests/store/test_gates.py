"""A tenant's calibrated gate in the store (both backends): versioned like rules, kept in its history, and used by
every matcher of the tenant, in every replica (two stores opened on one database play two replicas)."""

from __future__ import annotations

import pytest

from norma.embeddings import Embedder
from norma.errors import NotFoundError
from norma.matching import Rule, TenantMatchers, calibrate_gate, tenant_matcher
from norma.store import GateStore, open_store

RULES = [
    Rule(id="refund", condition_text="customer asks for a refund", examples=["I want my money back"]),
    Rule(id="lost-card", condition_text="customer lost their card", examples=["my card was stolen"]),
]
LABELLED = [
    ("can I get my money back", ["refund"]),
    ("I lost my card yesterday", ["lost-card"]),
    ("what is the weather like", []),
]


def test_save_load_clear_and_history(store_url: str, embedder: Embedder) -> None:
    store = open_store(store_url)
    try:
        assert isinstance(store, GateStore)
        with pytest.raises(NotFoundError, match="no rules"):
            store.save_gate("acme", {"kind": "calibrated"})
        assert store.upsert_rules("acme", RULES, embedder=embedder) == 1
        assert store.load_gate("acme") is None
        gate = {"kind": "calibrated", "score": "similarity", "threshold": 0.61, "terms": {"messages": 3}}
        assert store.save_gate("acme", gate) == 2  # one committed change: the version moves
        assert store.load_gate("acme") == gate
        assert store.load_gate("globex") is None  # tenants never see each other's gate
        assert store.save_gate("acme", None) == 3
        assert store.load_gate("acme") is None
        history = store.gate_history("acme")
        assert [(version, data) for version, data, _ in history] == [(2, gate), (3, None)]
        assert len(store.list_rules("acme")) == 2  # the rules are untouched
    finally:
        store.close()


def test_every_replica_uses_the_calibrated_gate(store_url: str, embedder: Embedder) -> None:
    writer, replica_a, replica_b = open_store(store_url), open_store(store_url), open_store(store_url)
    try:
        writer.upsert_rules("acme", RULES, embedder=embedder)
        a = TenantMatchers(replica_a, refresh_interval=0.0)
        b = TenantMatchers(replica_b, refresh_interval=0.0)
        before_a, before_b = a.get("acme", embedder=embedder), b.get("acme", embedder=embedder)
        assert before_a.gate().kind == before_b.gate().kind == "fixed"  # 2 examples: too few to measure
        gate = calibrate_gate(tenant_matcher(writer, "acme", embedder=embedder), LABELLED, target_precision=1.0)
        writer.save_gate("acme", gate.to_dict())
        after_a, after_b = a.get("acme", embedder=embedder), b.get("acme", embedder=embedder)
        assert after_a.gate() == after_b.gate() == gate  # both replicas refreshed to the stored gate
        message = "I lost my card yesterday"
        assert [m.rule.id for m in after_a.match(message)] == [m.rule.id for m in after_b.match(message)]
        assert after_a.match(message).gate == gate
        writer.save_gate("acme", None)
        assert a.get("acme", embedder=embedder).gate().kind == "fixed"
    finally:
        for store in (writer, replica_a, replica_b):
            store.close()
