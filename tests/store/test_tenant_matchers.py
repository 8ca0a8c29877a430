"""Tenant matchers (norma.matching) over every store backend: built from stored vectors (nothing re-embedded at
start-up), cached, refreshed on change."""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.embeddings import Embedder, get_embedder
from norma.errors import ConfigError
from norma.matching import Rule, TenantMatchers, candidate_matcher, tenant_matcher
from norma.rules import rule_texts
from norma.store import RuleStore, SQLiteRuleStore, open_store
from tests.store.conftest import CountingEmbedder

RULES = [
    Rule(
        id="refund",
        condition_text="customer asks for a refund",
        action_text="explain the refund policy",
        examples=["I want my money back", "can I return this for cash"],
    ),
    Rule(id="lost-card", condition_text="customer lost their card", examples=["my card was stolen"]),
    Rule(id="hello", condition_text="customer says hello", action_text="greet them"),
]


@pytest.fixture
def filled(store_url: str, embedder: Embedder) -> str:
    """A store URL whose tenant ``acme`` holds RULES (vectors written by the import)."""
    writer = open_store(store_url)
    writer.upsert_rules("acme", RULES, embedder=embedder)
    writer.upsert_rules("globex", [Rule(id="fees", condition_text="customer asks about fees")], embedder=embedder)
    writer.close()
    return store_url


def test_start_up_embeds_nothing(filled: str, counting: CountingEmbedder) -> None:
    store = open_store(filled)  # a fresh process would start exactly like this
    try:
        matcher = tenant_matcher(store, "acme", embedder=counting)
        assert counting.texts == []
        assert len(matcher) == 3
        assert matcher.tenant_id == "acme"
        matches = matcher.match("I want my money back please")
        assert matches[0].rule.id == "refund"
        assert counting.texts == ["I want my money back please"]  # only the message
    finally:
        store.close()


def test_cached_until_the_version_changes(filled: str, embedder: Embedder) -> None:
    store = open_store(filled)
    other_replica = open_store(filled)
    counting = CountingEmbedder(embedder)
    try:
        matchers = TenantMatchers(store, refresh_interval=3600.0)
        first = matchers.get("acme", embedder=counting)
        assert matchers.get("acme", embedder=counting) is first
        new_rule = Rule(id="fees", condition_text="customer asks why they were charged a fee")
        other_replica.upsert_rules("acme", [new_rule], embedder=embedder)
        assert len(matchers.get("acme", embedder=counting)) == 3  # not checked again within the interval
        matchers.refresh_interval = 0.0
        refreshed = matchers.get("acme", embedder=counting)
        assert sorted(r.id for r in refreshed.rules) == ["fees", "hello", "lost-card", "refund"]
        assert counting.texts == []  # the other replica's vectors were used
        assert refreshed.match("why was I charged this fee")[0].rule.id == "fees"
        counting.texts.clear()  # (the message was embedded)
        other_replica.delete_rules("acme", ["hello"])
        edited = RULES[1].model_copy(update={"tenant_id": "acme", "condition_text": "customer forgot their PIN"})
        other_replica.upsert_rules("acme", [edited], embedder=embedder)
        again = matchers.get("acme", embedder=counting)
        assert sorted(r.id for r in again.rules) == ["fees", "lost-card", "refund"]
        assert next(r for r in again.rules if r.id == "lost-card").condition_text == "customer forgot their PIN"
        assert counting.texts == []
    finally:
        store.close()
        other_replica.close()


def test_a_new_model_re_embeds_once_lazily(filled: str) -> None:
    int8 = CountingEmbedder(get_embedder(quantize=True))
    store = open_store(filled)
    try:
        assert store.load_vectors("acme", int8.model_id) == {}
        matcher = tenant_matcher(store, "acme", embedder=int8)
        assert sorted(int8.texts) == sorted(t for r in RULES for t in rule_texts(r))
        assert matcher.model_id == int8.model_id
        assert set(store.load_vectors("acme", int8.model_id)) == {"refund", "lost-card", "hello"}
    finally:
        store.close()
    int8.texts.clear()
    restarted = open_store(filled)
    try:
        tenant_matcher(restarted, "acme", embedder=int8)
        assert int8.texts == []  # written back the first time
    finally:
        restarted.close()


def test_matchers_are_per_tenant(filled: str, embedder: Embedder) -> None:
    store = open_store(filled)
    try:
        acme = tenant_matcher(store, "acme", embedder=embedder)
        globex = tenant_matcher(store, "globex", embedder=embedder)
        assert [r.id for r in globex.rules] == ["fees"]
        assert globex.tenant_id == "globex"
        assert "fees" not in {r.id for r in acme.rules}
        assert all(m.rule.id == "fees" for m in globex.match("I want a refund of the fee"))
    finally:
        store.close()


def test_an_empty_tenant_gets_an_empty_matcher_that_fills_up(store: RuleStore, embedder: Embedder) -> None:
    matchers = TenantMatchers(store, refresh_interval=0.0)
    empty = matchers.get("newcomer", embedder=embedder)
    assert len(empty) == 0
    assert list(empty.match("I want my money back")) == []
    store.upsert_rules("newcomer", RULES, embedder=embedder)
    filled = matchers.get("newcomer", embedder=embedder)
    assert sorted(r.id for r in filled.rules) == ["hello", "lost-card", "refund"]
    assert filled.tenant_id == "newcomer"
    assert filled.match("I want my money back please")[0].rule.id == "refund"


def test_one_cache_per_store_object(filled: str, embedder: Embedder) -> None:
    store = open_store(filled)
    other = open_store(filled)
    try:
        first = tenant_matcher(store, "acme", embedder=embedder)
        assert tenant_matcher(store, "acme", embedder=embedder) is first
        assert tenant_matcher(other, "acme", embedder=embedder) is not first
    finally:
        store.close()
        other.close()


def test_a_bad_tenant_id_is_refused_before_the_store_is_read(store: RuleStore, embedder: Embedder) -> None:
    with pytest.raises(ValueError, match="tenant id"):
        tenant_matcher(store, " acme", embedder=embedder)


def test_push_down_needs_a_store_that_searches_vectors(tmp_path: Path, embedder: Embedder) -> None:
    store = SQLiteRuleStore(tmp_path / "x.db")
    try:
        with pytest.raises(ConfigError, match="cannot search vectors"):
            candidate_matcher(store, "acme", "I want my money back", embedder=embedder)
    finally:
        store.close()


def test_the_held_out_examples_given_are_the_statistics_not_a_gate(filled: str, embedder: Embedder) -> None:
    from norma.embeddings import text_key
    from norma.matching import CalibratedGate, ConfidenceGate, HeldOut, snapshot_matcher, tenant_gate

    owners = tuple((text_key(RULES[0].embedding_text), 0.60 + k / 100, 0.40) for k in range(5))
    held = HeldOut((0.6,) * 20, rules=3, owners=owners)
    store = open_store(filled)
    try:
        given = TenantMatchers(store, held_out=held).get("acme", embedder=embedder)
        assert (given.gate(), given.held_out) == (ConfidenceGate(), held)
        assert given.stats().texts == 5  # from the held-out probes
        snapshot = snapshot_matcher(store, "acme", embedder=embedder, held_out=held)
        assert snapshot.stats() == given.stats()
        plain = TenantMatchers(store).get("acme", embedder=embedder)
        assert (plain.gate(), plain.held_out) == (ConfidenceGate(), None)
        assert plain.stats() != given.stats()
        calibrated = CalibratedGate(0.5, "precision", messages=3, goal=0.9, model=embedder.model_id)
        store.save_gate("acme", calibrated.to_dict())  # type: ignore[attr-defined]
        assert TenantMatchers(store, held_out=held).get("acme", embedder=embedder).gate() == calibrated
        assert tenant_gate(store, "acme") == calibrated
    finally:
        store.close()


def test_a_calibrated_tenant_keeps_the_adapted_encoders_figures_for_its_confidence(
    filled: str, embedder: Embedder
) -> None:
    from norma.embeddings import text_key
    from norma.matching import CalibratedGate, HeldOut
    from norma.matching._confidence import PRIOR, SHRINK

    first = RULES[0]
    owners = tuple((text_key(first.embedding_text), 0.60 + k / 100, 0.40) for k in range(5))
    held = HeldOut((0.6,) * 20, rules=3, owners=owners)
    store = open_store(filled)
    try:
        calibrated = CalibratedGate(0.5, "precision", messages=3, goal=0.9, model=embedder.model_id)
        store.save_gate("acme", calibrated.to_dict())  # type: ignore[attr-defined]
        matcher = TenantMatchers(store, held_out=held).get("acme", embedder=embedder)
        assert matcher.gate() == calibrated
        stats = matcher.stats()  # from the five held-out probes, not from the rules' texts
        assert stats.texts == 5
        book_in = (5 * 0.62 + SHRINK * PRIOR["inside"]) / (5 + SHRINK)  # the median of 0.60-0.64 is 0.62
        assert stats.probe == pytest.approx((5 * 0.62 + SHRINK * PRIOR["probe"]) / (5 + SHRINK), abs=1e-9)
        assert stats.inside[first.id] == pytest.approx((5 * 0.62 + SHRINK * book_in) / (5 + SHRINK), abs=1e-9)
        assert stats.inside[RULES[1].id] == pytest.approx(book_in, abs=1e-9)  # never held out: the rulebook's
    finally:
        store.close()


def test_the_tenants_statistics_are_read_once_per_version_of_its_rules(tmp_path: Path, embedder: Embedder) -> None:
    from norma.matching import tenant_matchers

    class Snapshots(SQLiteRuleStore):
        """A real SQLite store that counts the tenant snapshots it reads (what measuring the statistics costs)."""

        read = 0

        def snapshot(self, tenant_id: str, model_id: str):  # type: ignore[no-untyped-def]
            self.read += 1
            return super().snapshot(tenant_id, model_id)

    store = Snapshots(tmp_path / "rules.db")
    try:
        store.upsert_rules("acme", RULES, embedder=embedder)
        matchers = tenant_matchers(store)
        first = matchers.stats("acme", embedder=embedder)
        assert matchers.stats("acme", embedder=embedder) is first
        assert store.read == 1  # kept for version 1
        store.upsert_rules("acme", [Rule(id="fees", condition_text="customer asks about fees")], embedder=embedder)
        matchers.stats("acme", embedder=embedder)
        matchers.stats("acme", embedder=embedder)
        assert store.read == 2  # measured again for version 2, once
        matchers.clear()  # kept by the store's TenantMatchers: cleared with them
        matchers.stats("acme", embedder=embedder)
        assert store.read == 3
    finally:
        store.close()
