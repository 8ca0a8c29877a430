"""``rules_at``: a tenant's rules as they were at one version, read from their history, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from norma.embeddings import Embedder
from norma.errors import InvalidInputError, NotFoundError
from norma.rules import Rule
from norma.store import PostgresRuleStore, SQLiteRuleStore

Store = SQLiteRuleStore | PostgresRuleStore
"""What the ``store`` fixture gives: both backends keep the rules' history."""

REFUND = Rule(id="refund", tenant_id="acme", condition_text="customer asks for a refund", priority=1)
GREET = Rule(id="greet", tenant_id="acme", condition_text="customer says hello")
CLOSE = Rule(id="close", tenant_id="acme", condition_text="customer wants to close the account")


def _history(store: Store, embedder: Embedder) -> None:
    """Versions 1-6 of tenant acme (and one of globex, which must never show):

    1: refund, greet. 2: refund's priority 5. 3: greet deleted. 4: close added. 5: a gate set (no rule changes).
    6: greet back, with another condition."""
    assert store.upsert_rules("acme", [REFUND, GREET], embedder=embedder) == 1
    store.upsert_rules("globex", [Rule(id="refund", condition_text="globex refunds")], embedder=embedder)
    assert store.upsert_rules("acme", [REFUND.model_copy(update={"priority": 5})], embedder=embedder) == 2
    assert store.delete_rules("acme", ["greet"]) == 3
    assert store.upsert_rules("acme", [CLOSE], embedder=embedder) == 4
    assert store.save_gate("acme", {"kind": "fixed", "score": "cosine", "threshold": 0.5}) == 5
    back = GREET.model_copy(update={"condition_text": "customer greets us"})
    assert store.upsert_rules("acme", [back], embedder=embedder) == 6


def _seen(rules: list[Rule]) -> list[tuple[str, int, str]]:
    return [(r.id, r.priority, r.condition_text) for r in rules]


def test_each_version_is_the_rules_as_they_were(store: Store, embedder: Embedder) -> None:
    _history(store, embedder)
    rules_at = store.rules_at
    assert _seen(rules_at("acme", 1)) == [
        ("greet", 0, "customer says hello"),
        ("refund", 1, "customer asks for a refund"),
    ]
    assert _seen(rules_at("acme", 2)) == [
        ("greet", 0, "customer says hello"),
        ("refund", 5, "customer asks for a refund"),
    ]
    assert _seen(rules_at("acme", 3)) == [("refund", 5, "customer asks for a refund")]  # the deletion respected
    expected_4 = [("close", 0, "customer wants to close the account"), ("refund", 5, "customer asks for a refund")]
    assert _seen(rules_at("acme", 4)) == expected_4
    assert _seen(rules_at("acme", 5)) == expected_4  # the gate changed the version, not the rules
    assert _seen(rules_at("acme", 6)) == [
        ("close", 0, "customer wants to close the account"),
        ("greet", 0, "customer greets us"),
        ("refund", 5, "customer asks for a refund"),
    ]
    assert rules_at("acme", 6) == store.list_rules("acme")  # the current version is today's rules, field for field
    assert all(rule.tenant_id == "acme" for version in range(1, 7) for rule in rules_at("acme", version))


def test_a_version_the_tenant_never_had_is_not_found(store: Store, embedder: Embedder) -> None:
    _history(store, embedder)
    for version in (0, -1, 7):
        with pytest.raises(NotFoundError) as caught:
            store.rules_at("acme", version)
        assert caught.value.message == f"tenant 'acme' has no version {version}: its versions are 1 to 6"
        assert caught.value.location == "version"


def test_a_tenant_without_rules_and_a_version_that_is_no_integer(store: Store, embedder: Embedder) -> None:
    with pytest.raises(NotFoundError) as caught:
        store.rules_at("nobody", 1)
    assert caught.value.message.startswith("tenant 'nobody' has no rules in ")
    store.upsert_rules("acme", [REFUND], embedder=embedder)
    for wrong in ("1", 1.0, True):
        with pytest.raises(InvalidInputError) as invalid:
            store.rules_at("acme", wrong)
        assert invalid.value.message.startswith("a rules version is an integer, not ")
