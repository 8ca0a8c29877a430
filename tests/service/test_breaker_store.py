"""The store the service reads and writes through: a typed Store (each protocol method, no attribute forwarding)
whose every call goes through the circuit breaker, on a real SQLite store."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from norma.errors import StoreUnavailableError
from norma.rules import Rule
from norma.service._outage import BreakerStore, StoreHealth, through_breaker
from norma.store import GateStore, KeyStore, RuleStore, Store, VectorSearch, open_store


def _protocol_methods() -> set[str]:
    return {
        name
        for protocol in (RuleStore, KeyStore, GateStore)
        for name, value in vars(protocol).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }


def test_every_method_of_the_store_protocol_is_written_out() -> None:
    own = {name for name, value in vars(BreakerStore).items() if inspect.isfunction(value)}
    assert _protocol_methods() <= own
    assert "__getattr__" not in own


def test_calls_go_to_the_store_and_fail_fast_while_it_is_down(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'rules.db'}")
    health = StoreHealth()
    breaker = through_breaker(store, health)
    try:
        assert isinstance(breaker, Store)
        assert not isinstance(breaker, VectorSearch)  # SQLite finds no vectors itself: the wrapper does not either
        assert breaker.url == store.url
        rule = Rule(id="refund", condition_text="customer asks for a refund")
        vectors = {"refund": np.ones((1, 384), dtype=np.float32)}  # the default model's dim
        assert breaker.upsert_rules("acme", [rule], vectors=vectors) == 1
        assert breaker.get_rule("acme", "refund") == store.get_rule("acme", "refund")
        assert breaker.snapshot("acme", "any-model")[0] == 1
        secret = breaker.create_api_key("acme", name="bot")
        key = breaker.check_api_key(secret)
        assert key is not None
        assert key.tenant_id == "acme"
        assert breaker.save_gate("acme", {"kind": "fixed", "threshold": 0.5}) == 2

        def unreachable() -> None:
            raise StoreUnavailableError("the rule store is unreachable")

        with pytest.raises(StoreUnavailableError):
            health.call(unreachable)  # marks it down: the next second, calls fail without reaching the store
        calls: dict[str, Callable[[], Any]] = {
            "upsert_rules": lambda: breaker.upsert_rules("acme", [rule], vectors=vectors),
            "get_rule": lambda: breaker.get_rule("acme", "refund"),
            "list_rules": lambda: breaker.list_rules("acme"),
            "delete_rules": lambda: breaker.delete_rules("acme", ["refund"]),
            "version": lambda: breaker.version("acme"),
            "history": lambda: breaker.history("acme", "refund"),
            "tenants": breaker.tenants,
            "load_vectors": lambda: breaker.load_vectors("acme", "m"),
            "save_vectors": lambda: breaker.save_vectors("acme", "m", {}),
            "snapshot": lambda: breaker.snapshot("acme", "m"),
            "changes_since": lambda: breaker.changes_since("acme", 0, "m"),
            "rules_with_vectors": lambda: breaker.rules_with_vectors("acme", ["refund"], "m"),
            "close": breaker.close,
            "create_api_key": lambda: breaker.create_api_key("acme"),
            "check_api_key": lambda: breaker.check_api_key(secret),
            "list_api_keys": lambda: breaker.list_api_keys(),
            "revoke_api_key": lambda: breaker.revoke_api_key(key.key_id),
            "save_gate": lambda: breaker.save_gate("acme", None),
            "load_gate": lambda: breaker.load_gate("acme"),
            "gate_history": lambda: breaker.gate_history("acme"),
        }
        assert set(calls) == _protocol_methods()
        for name, call in calls.items():
            with pytest.raises(StoreUnavailableError, match="unreachable"):
                call()
            assert store.version("acme") == 2, name  # nothing reached the store
        assert store.check_api_key(secret) is not None
    finally:
        store.close()
