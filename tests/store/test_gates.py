"""A tenant's calibrated gate in the store (both backends): versioned like rules, kept in its history, and used by
every matcher of the tenant, in every replica (two stores opened on one database play two replicas)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from norma.embeddings import Embedder
from norma.errors import NotFoundError
from norma.matching import Rule, TenantMatchers, calibrate_gate, tenant_matcher
from norma.store import GateStore, RuleStore, open_store

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


@contextmanager
def _replicas(store_url: str) -> Iterator[tuple[RuleStore, TenantMatchers, TenantMatchers]]:
    """A writer and two replicas' matchers (each its own store object on one database), refreshed on every get."""
    writer, replica_a, replica_b = open_store(store_url), open_store(store_url), open_store(store_url)
    try:
        yield writer, TenantMatchers(replica_a, refresh_interval=0.0), TenantMatchers(replica_b, refresh_interval=0.0)
    finally:
        for store in (writer, replica_a, replica_b):
            store.close()


def test_every_replica_uses_the_calibrated_gate(store_url: str, embedder: Embedder) -> None:
    with _replicas(store_url) as (writer, a, b):
        writer.upsert_rules("acme", RULES, embedder=embedder)
        before_a, before_b = a.get("acme", embedder=embedder), b.get("acme", embedder=embedder)
        assert before_a.gate().kind == before_b.gate().kind == "confidence"  # the default
        gate = calibrate_gate(tenant_matcher(writer, "acme", embedder=embedder), LABELLED, target_precision=1.0)
        writer.save_gate("acme", gate.to_dict())
        after_a, after_b = a.get("acme", embedder=embedder), b.get("acme", embedder=embedder)
        assert after_a.gate() == after_b.gate() == gate  # both replicas refreshed to the stored gate
        message = "I lost my card yesterday"
        assert [m.rule.id for m in after_a.match(message)] == [m.rule.id for m in after_b.match(message)]
        assert after_a.match(message).gate == gate
        writer.save_gate("acme", None)
        assert a.get("acme", embedder=embedder).gate().kind == "confidence"


MEASURED = [
    Rule(id=name, condition_text=f"customer asks about {name}", examples=[f"{text} {k}" for k in range(6)])
    for name, text in (
        ("refund", "I want my money back for order"),
        ("lost-card", "my card was stolen on day"),
        ("delivery", "where is my parcel number"),
        ("greeting", "hello there friend number"),
    )
]


def test_every_replica_applies_the_same_gate_until_one_is_calibrated(store_url: str, embedder: Embedder) -> None:
    from norma.matching import ConfidenceGate, MatchConfig, tenant_gate
    from norma.matching._tenants import stored_gate

    with _replicas(store_url) as (writer, a, b):
        writer.upsert_rules("acme", MEASURED, embedder=embedder)
        default = a.get("acme", embedder=embedder).gate()
        assert default == b.get("acme", embedder=embedder).gate() == ConfidenceGate()
        assert tenant_gate(writer, "acme") == default
        assert tenant_gate(writer, "acme", config=MatchConfig(threshold=0.3)).to_dict()["kind"] == "fixed"
        assert stored_gate(writer, "acme") is None

        calibrated = calibrate_gate(a.get("acme", embedder=embedder), [*LABELLED, ("hello there", ["greeting"])])
        assert (calibrated.target, calibrated.score) == ("balanced", "confidence")
        version = writer.save_gate("acme", calibrated.to_dict())
        assert version == 2  # a committed change: every replica sees the version move
        assert stored_gate(writer, "acme") == calibrated
        gate_a, gate_b = a.get("acme", embedder=embedder).gate(), b.get("acme", embedder=embedder).gate()
        assert gate_a == gate_b == calibrated
        assert a.get("acme", embedder=embedder).refit == b.get("acme", embedder=embedder).refit == calibrated.refit
        assert tenant_gate(writer, "acme") == calibrated
        message = "I want my money back for order 3"
        assert a.get("acme", embedder=embedder).match(message) == b.get("acme", embedder=embedder).match(message)
        writer.save_gate("acme", None)
        assert b.get("acme", embedder=embedder).gate() == default
        assert a.get("acme", embedder=embedder).gate() == default
        assert a.get("acme", embedder=embedder).refit is None
        kinds = [None if data is None else data["kind"] for _, data, _ in writer.gate_history("acme")]
        assert kinds == ["calibrated", None]


def test_a_malformed_stored_gate_is_refused(store_url: str, embedder: Embedder) -> None:
    from norma.errors import InvalidInputError
    from norma.matching._tenants import stored_gate

    store = open_store(store_url)
    try:
        store.upsert_rules("acme", RULES, embedder=embedder)
        assert isinstance(store, GateStore)
        store.save_gate("acme", {"kind": "calibrated", "score": "similarity", "threshold": "high"})
        with pytest.raises(InvalidInputError, match="stored gate is malformed"):
            stored_gate(store, "acme")
        store.save_gate("acme", {"kind": "quantile", "gate_quantile": 0.05})  # what a removed setting stored
        with pytest.raises(InvalidInputError, match="stored gate is malformed"):
            stored_gate(store, "acme")
    finally:
        store.close()
