"""The RuleStore contract, run against SQLite and PostgreSQL alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from norma.embeddings import Embedder, get_embedder
from norma.errors import InvalidInputError, NotFoundError
from norma.matching import Rule, Scope
from norma.rules import rule_texts
from norma.store import KeyStore, RuleStore, Store, open_store
from tests.store.conftest import CountingEmbedder

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def rules_for(tenant: str = "default") -> list[Rule]:
    return [
        Rule(
            id="refund",
            tenant_id=tenant,
            condition_text="customer asks for a refund",
            action_text="explain the refund policy",
            priority=10,
            tags=["billing"],
            examples=["I want my money back", "can I return this for cash"],
        ),
        Rule(id="greet", tenant_id=tenant, condition_text="customer says hello", action_text="greet them"),
        Rule(
            id="kyc-id",
            tenant_id=tenant,
            condition_text="customer sends an identity document",
            scope=Scope.STEP,
            scenario_id="onboarding",
            step_id="kyc",
            tags=["kyc", "billing"],
        ),
        Rule(
            id="onboarding-help",
            tenant_id=tenant,
            condition_text="customer is confused about opening an account",
            scope=Scope.SCENARIO,
            scenario_id="onboarding",
            enabled=False,
        ),
    ]


def test_is_a_rule_store_and_a_key_store(store: RuleStore) -> None:
    assert isinstance(store, RuleStore)
    assert isinstance(store, KeyStore)
    assert isinstance(store, Store)


def test_rules_with_vectors_reads_some_rules_and_their_fresh_vectors(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", rules_for(), embedder=embedder)
    store.upsert_rules("globex", [Rule(id="greet", condition_text="customer waves")], embedder=embedder)
    rules, vectors = store.rules_with_vectors("acme", ["refund", "nope", "greet", "refund"], embedder.model_id)
    assert [r.id for r in rules] == ["greet", "refund"]  # sorted by id, unknown ids skipped, duplicates once
    assert rules[0].condition_text == "customer says hello"  # acme's, not globex's
    assert sorted(vectors) == ["greet", "refund"]
    np.testing.assert_allclose(vectors["refund"], embedder.embed(rule_texts(rules[1])), atol=1e-6)
    assert store.rules_with_vectors("acme", [], embedder.model_id) == ([], {})
    assert store.rules_with_vectors("acme", ["refund"], "another-model")[1] == {}


def test_upsert_then_get_and_list(store: RuleStore, embedder: Embedder) -> None:
    assert store.version("acme") == 0
    version = store.upsert_rules("acme", rules_for(), embedder=embedder)
    assert version == 1
    assert store.version("acme") == 1
    got = store.get_rule("acme", "refund")
    assert got.tenant_id == "acme"  # "default" replaced by the tenant
    assert got.examples == ("I want my money back", "can I return this for cash")
    assert [r.id for r in store.list_rules("acme")] == ["greet", "kyc-id", "onboarding-help", "refund"]
    assert store.tenants() == ["acme"]


def test_list_filters(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", rules_for(), embedder=embedder)

    def ids(**kwargs: object) -> list[str]:
        return [r.id for r in store.list_rules("acme", **kwargs)]  # type: ignore[arg-type]

    assert ids(scope=Scope.GLOBAL) == ["greet", "refund"]
    assert ids(scope="STEP") == ["kyc-id"]
    assert ids(scenario_id="onboarding") == ["kyc-id", "onboarding-help"]
    assert ids(step_id="kyc") == ["kyc-id"]
    assert ids(enabled=False) == ["onboarding-help"]
    assert ids(enabled=True, tag="billing") == ["kyc-id", "refund"]
    assert ids(tag="nothing") == []
    with pytest.raises(InvalidInputError, match="unknown scope"):
        store.list_rules("acme", scope="planet")


def test_unchanged_rules_do_not_bump_the_version(store: RuleStore, counting: CountingEmbedder) -> None:
    assert store.upsert_rules("acme", rules_for(), embedder=counting) == 1
    embedded = len(counting.texts)
    assert embedded == sum(len(rule_texts(r)) for r in rules_for())
    assert store.upsert_rules("acme", rules_for(), embedder=counting) == 1
    assert len(counting.texts) == embedded  # nothing re-embedded either
    assert [h.version for h in store.history("acme", "refund")] == [1]


def test_changed_text_is_re_embedded_other_changes_are_not(store: RuleStore, counting: CountingEmbedder) -> None:
    store.upsert_rules("acme", rules_for(), embedder=counting)
    counting.texts.clear()
    base = {r.id: r for r in rules_for("acme")}
    priority_only = base["refund"].model_copy(update={"priority": 99})
    new_text = base["greet"].model_copy(update={"condition_text": "customer says good morning"})
    assert store.upsert_rules("acme", [priority_only, new_text], embedder=counting) == 2
    assert counting.texts == ["customer says good morning greet them"]
    stored = store.load_vectors("acme", MODEL)
    expected = counting.inner.embed(rule_texts(new_text))
    np.testing.assert_allclose(stored["greet"], expected, atol=1e-6)
    assert store.get_rule("acme", "refund").priority == 99


def test_vectors_are_the_embedders(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", rules_for(), embedder=embedder)
    stored = store.load_vectors("acme", MODEL)
    assert set(stored) == {"refund", "greet", "kyc-id", "onboarding-help"}
    for rule in rules_for("acme"):
        matrix = stored[rule.id]
        assert matrix.dtype == np.float32
        assert matrix.shape == (len(rule_texts(rule)), embedder.dim)
        np.testing.assert_allclose(matrix, embedder.embed(rule_texts(rule)), atol=1e-6)  # batching: rounding only
    assert store.load_vectors("acme", "some/other-model") == {}


def test_precomputed_vectors_are_stored_as_given(store: RuleStore, counting: CountingEmbedder) -> None:
    rule = Rule(id="r1", condition_text="anything", examples=["one"])
    given = np.eye(2, counting.dim, dtype=np.float32)
    store.upsert_rules("acme", [rule], embedder=counting, vectors={"r1": given})
    assert counting.texts == []
    np.testing.assert_array_equal(store.load_vectors("acme", MODEL)["r1"], given)
    with pytest.raises(InvalidInputError, match="shape"):
        store.upsert_rules("acme", [rule], embedder=counting, vectors={"r1": np.zeros((1, 3), np.float32)})


def test_a_failed_batch_writes_nothing(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", rules_for()[:1], embedder=embedder)
    good = Rule(id="new", condition_text="customer asks about fees")
    twice = Rule(id="new", condition_text="again")
    with pytest.raises(InvalidInputError, match="twice"):
        store.upsert_rules("acme", [good, twice], embedder=embedder)
    foreign = Rule(id="x", tenant_id="globex", condition_text="hello")
    with pytest.raises(InvalidInputError, match="globex"):
        store.upsert_rules("acme", [good, foreign], embedder=embedder)
    with pytest.raises(NotFoundError):
        store.delete_rules("acme", ["refund", "missing"])
    assert store.version("acme") == 1
    assert [r.id for r in store.list_rules("acme")] == ["refund"]


def test_delete_and_history(store: RuleStore, embedder: Embedder) -> None:
    before = datetime.now(UTC) - timedelta(seconds=5)
    store.upsert_rules("acme", rules_for(), embedder=embedder)
    edited = store.get_rule("acme", "greet").model_copy(update={"action_text": "greet them by name"})
    assert store.upsert_rules("acme", [edited], embedder=embedder) == 2
    assert store.delete_rules("acme", ["greet", "refund"]) == 3
    with pytest.raises(NotFoundError):
        store.get_rule("acme", "greet")
    assert "greet" not in store.load_vectors("acme", MODEL)
    recreated = Rule(id="greet", condition_text="customer says hi")
    assert store.upsert_rules("acme", [recreated], embedder=embedder) == 4
    history = store.history("acme", "greet")
    assert [(h.version, h.tenant_version) for h in history] == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert history[0].rule is not None
    assert history[0].rule.action_text == "greet them"
    assert history[1].rule is not None
    assert history[1].rule.action_text == "greet them by name"
    assert history[2].rule is None
    assert history[3].rule is not None
    assert history[3].rule.condition_text == "customer says hi"
    assert all(h.changed_at >= before for h in history)
    assert [h.changed_at for h in history] == sorted(h.changed_at for h in history)
    with pytest.raises(NotFoundError):
        store.history("acme", "never-existed")


def test_tenants_are_isolated(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", rules_for(), embedder=embedder)
    secret_rule = Rule(id="refund", condition_text="globex secret refund procedure", tags=["billing"])
    store.upsert_rules("globex", [secret_rule], embedder=embedder)
    # the same rule id in two tenants: each sees only its own
    assert store.get_rule("acme", "refund").condition_text == "customer asks for a refund"
    assert store.get_rule("globex", "refund").condition_text == "globex secret refund procedure"
    assert [r.id for r in store.list_rules("globex")] == ["refund"]
    assert [r.id for r in store.list_rules("globex", tag="billing")] == ["refund"]
    assert all(r.tenant_id == "acme" for r in store.list_rules("acme"))
    with pytest.raises(NotFoundError):
        store.get_rule("globex", "greet")
    with pytest.raises(NotFoundError):
        store.history("globex", "greet")
    assert len(store.history("globex", "refund")) == 1
    assert set(store.load_vectors("globex", MODEL)) == {"refund"}
    # deleting in one tenant leaves the other alone; versions are per tenant
    with pytest.raises(NotFoundError):
        store.delete_rules("globex", ["greet"])
    assert store.delete_rules("globex", ["refund"]) == 2
    assert store.get_rule("acme", "refund").condition_text == "customer asks for a refund"
    assert store.version("acme") == 1
    assert store.version("nobody") == 0
    assert store.list_rules("nobody") == []
    assert store.tenants() == ["acme", "globex"]


def test_bad_tenant_ids_are_refused(store: RuleStore) -> None:
    for bad in ["", " acme", "a\nb", "x" * 300]:
        with pytest.raises(InvalidInputError):
            store.version(bad)


def test_reopening_sees_everything(store_url: str, embedder: Embedder) -> None:
    first = open_store(store_url)
    first.upsert_rules("acme", rules_for(), embedder=embedder)
    first.close()
    again = open_store(store_url)  # migrations re-run: nothing to do, nothing lost
    try:
        assert again.version("acme") == 1
        assert len(again.list_rules("acme")) == 4
        assert len(again.load_vectors("acme", MODEL)) == 4
        expected = [1, 2, 3] if store_url.startswith("postgres") else [1, 2]  # 3: the write deadline (PostgreSQL)
        assert again.migrations() == expected  # type: ignore[attr-defined]
    finally:
        again.close()


def test_a_closed_store_says_so(store_url: str) -> None:
    opened = open_store(store_url)
    opened.close()
    opened.close()  # idempotent
    with pytest.raises(Exception, match="closed"):
        opened.version("acme")


def test_url_hides_the_password(store: RuleStore) -> None:
    assert "***" in store.url or ":@" in store.url or store.url.startswith("sqlite:")


def test_api_keys(store: RuleStore) -> None:
    secret = store.create_api_key("acme", name="support-bot")
    admin_secret = store.create_api_key(None, admin=True, name="ops")
    key = store.check_api_key(secret)
    assert key is not None
    assert (key.tenant_id, key.admin, key.name) == ("acme", False, "support-bot")
    admin = store.check_api_key(admin_secret)
    assert admin is not None
    assert admin.admin
    assert admin.tenant_id is None
    assert store.check_api_key(secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    assert store.check_api_key("nonsense") is None
    assert store.check_api_key("") is None
    assert [k.key_id for k in store.list_api_keys("acme")] == [key.key_id]
    assert len(store.list_api_keys()) == 2
    store.revoke_api_key(key.key_id)
    assert store.check_api_key(secret) is None
    assert store.list_api_keys("acme")[0].revoked_at is not None
    with pytest.raises(NotFoundError):
        store.revoke_api_key("000000000000")
    with pytest.raises(InvalidInputError):
        store.create_api_key(None)
    with pytest.raises(InvalidInputError):
        store.create_api_key("acme", admin=True)


def test_secrets_are_not_stored(store: RuleStore, store_url: str) -> None:
    secret = store.create_api_key("acme")
    token = secret.split("_", 2)[2]  # the random part (it may itself contain "_")
    assert len(token) >= 40
    if store_url.startswith("sqlite"):
        path = store_url.removeprefix("sqlite:///")
        store.close()
        for name in [path, path + "-wal"]:
            try:
                with open(name, "rb") as handle:
                    assert token.encode() not in handle.read()
            except FileNotFoundError:
                pass
    else:
        import psycopg

        with psycopg.connect(store_url) as conn:
            dump = str(conn.execute("SELECT * FROM api_keys").fetchall())
        assert token not in dump


def test_default_embedder_is_the_shared_one(store: RuleStore) -> None:
    store.upsert_rules("acme", [Rule(id="r", condition_text="customer asks about fees")])
    assert set(store.load_vectors("acme", get_embedder().model_id)) == {"r"}


def test_a_rule_stored_under_looser_metadata_limits_still_loads() -> None:
    """Metadata nested deeper than today's limit (the service once accepted about 300 levels) is read back: the
    limits guard the ways in, not what a store already keeps."""
    import json as _json

    from norma.rules import MAX_METADATA_DEPTH
    from norma.store._base import load_rule

    deep: dict[str, object] = {"leaf": 1}
    for _ in range(MAX_METADATA_DEPTH + 20):
        deep = {"k": deep}
    with pytest.raises(InvalidInputError, match="deeper"):
        Rule(id="r", condition_text="x", metadata=deep)
    stored = {"id": "r", "tenant_id": "acme", "condition_text": "x", "metadata": deep}
    rule = load_rule(_json.dumps(stored))
    assert rule.metadata == deep
    assert Rule.from_stored(stored) == rule
    with pytest.raises(ValueError, match="condition_text"):  # every other check still applies
        load_rule({**stored, "condition_text": " "})
