"""What only the PostgreSQL store has: re-runnable migrations, the HNSW index, pgvector candidate search."""

from __future__ import annotations

import threading

import numpy as np
import psycopg
import pytest

from norma.embeddings import Embedder
from norma.matching import Rule, RuleMatcher, candidate_matcher
from norma.rules import rule_texts
from norma.store import PostgresRuleStore, open_store
from tests._pgserver import fresh_database
from tests.store.test_gates import MEASURED


@pytest.fixture
def pg_url(pg_server_url: str) -> str:
    return fresh_database(pg_server_url)


def test_migrations_are_recorded_and_safe_to_re_run_concurrently(pg_url: str) -> None:
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            open_store(pg_url).close()
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
        assert [r[0] for r in rows] == [1, 2, 3]
        assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone() == (1,)


def _hnsw_indexes(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = 'rule_vectors'").fetchall()
    return [r[0] for r in rows if "hnsw" in r[0]]


def test_hnsw_index_on_request(pg_url: str, embedder: Embedder) -> None:
    store = open_store(pg_url)
    assert isinstance(store, PostgresRuleStore)
    try:
        store.upsert_rules("acme", [Rule(id="a", condition_text="customer asks for a refund")], embedder=embedder)
        assert _hnsw_indexes(pg_url) == []  # not by default: it costs every write
        store.create_vector_index(embedder.dim)
        store.create_vector_index(embedder.dim)  # idempotent
        (definition,) = _hnsw_indexes(pg_url)
        assert f"rule_vectors_hnsw_{embedder.dim}" in definition
        assert "vector_cosine_ops" in definition
        with psycopg.connect(pg_url) as conn:
            conn.execute("SET enable_seqscan = off")
            plan = conn.execute(
                f"EXPLAIN SELECT rule_id FROM rule_vectors WHERE dim = {embedder.dim} ORDER BY"
                f" embedding::vector({embedder.dim}) <=> %s::vector({embedder.dim}) LIMIT 5",
                (str([0.0] * (embedder.dim - 1) + [1.0]),),
            ).fetchall()
        assert any(f"rule_vectors_hnsw_{embedder.dim}" in row[0] for row in plan)
    finally:
        store.close()


def test_hnsw_index_from_the_url(pg_url: str, embedder: Embedder) -> None:
    store = open_store(pg_url + "&vector_index=hnsw")
    try:
        assert "vector_index=hnsw" in store.url
        store.upsert_rules("acme", [Rule(id="a", condition_text="customer asks for a refund")], embedder=embedder)
    finally:
        store.close()
    assert len(_hnsw_indexes(pg_url)) == 1


@pytest.mark.parametrize("indexed", [False, True])
def test_search_pushes_candidates_down(pg_url: str, embedder: Embedder, indexed: bool) -> None:
    store = open_store(pg_url + ("&vector_index=hnsw" if indexed else ""))
    assert isinstance(store, PostgresRuleStore)
    try:
        rules = [
            Rule(id="refund", condition_text="customer asks for a refund", examples=["I want my money back"]),
            Rule(id="card", condition_text="customer lost their card"),
            Rule(id="hello", condition_text="customer says hello"),
        ]
        store.upsert_rules("acme", rules, embedder=embedder)
        store.upsert_rules(
            "globex", [Rule(id="other", condition_text="customer wants money back now")], embedder=embedder
        )
        query = embedder.embed(["can I have my money back"])[0]
        found = store.search("acme", query, model_id=embedder.model_id, limit=2)
        exact = {r.id: float(np.max(embedder.embed(rule_texts(r)) @ query)) for r in rules}
        best = sorted(exact, key=lambda rule_id: -exact[rule_id])[:2]
        assert [rule_id for rule_id, _ in found] == best  # never globex's "other", though it is close
        assert best[0] == "refund"
        for rule_id, similarity in found:
            assert similarity == pytest.approx(exact[rule_id], abs=1e-4)
        # a changed rule's old vectors are not found
        store.upsert_rules(
            "acme", [Rule(id="refund", condition_text="customer asks about opening hours")], embedder=embedder
        )
        again = dict(store.search("acme", query, model_id=embedder.model_id, limit=3))
        assert again["refund"] < found[0][1] - 0.2
    finally:
        store.close()


def test_candidate_matcher_holds_only_the_nearest_rules(pg_url: str, embedder: Embedder) -> None:
    store = open_store(pg_url)
    assert isinstance(store, PostgresRuleStore)
    try:
        rules = [
            Rule(id="refund", condition_text="customer asks for a refund", examples=["I want my money back"]),
            Rule(id="card", condition_text="customer lost their card"),
            Rule(id="hello", condition_text="customer says hello"),
            Rule(id="hours", condition_text="customer asks when the branch opens"),
        ]
        store.upsert_rules("acme", rules, embedder=embedder)
        small = candidate_matcher(store, "acme", "I want my money back", embedder=embedder, limit=2)
        assert len(small) == 2
        assert small.tenant_id == "acme"
        assert small.match("I want my money back")[0].rule.id == "refund"
    finally:
        store.close()


def test_candidate_matcher_applies_the_tenants_gate_and_statistics_whatever_the_message(
    pg_url: str, embedder: Embedder
) -> None:
    from norma.matching import ConfidenceGate, TenantMatchers, calibrate_gate, tenant_gate

    store = open_store(pg_url)
    assert isinstance(store, PostgresRuleStore)
    try:
        store.upsert_rules("acme", MEASURED, embedder=embedder)
        refund = candidate_matcher(store, "acme", "I want my money back", embedder=embedder, limit=2)
        parcel = candidate_matcher(store, "acme", "where is my parcel", embedder=embedder, limit=2)
        assert {r.id for r in refund.rules} != {r.id for r in parcel.rules}  # other candidates
        assert refund.gate() == parcel.gate() == tenant_gate(store, "acme") == ConfidenceGate()
        tenants = TenantMatchers(store, refresh_interval=0.0)  # the full tenant matcher, refreshed on every get
        whole = tenants.get("acme", embedder=embedder)
        # the confidence reads the whole tenant's statistics, not its 2 candidates'
        stats = whole.stats()
        assert refund.stats() is parcel.stats()  # measured once for this version of the tenant
        assert refund.stats() == stats
        assert stats != RuleMatcher([r for r in MEASURED if r.id in refund], embedder=embedder).stats()
        for message, pushed in (("I want my money back", refund), ("where is my parcel", parcel)):
            # the same rules govern; the confidences differ a little (BM25 and the gap read the 2 candidates)
            assert [m.rule.id for m in pushed.match(message)] == [m.rule.id for m in whole.match(message)]
            assert pushed.match(message)
        # a new version of the rules: measured again, for every message alike
        store.upsert_rules("acme", [MEASURED[0].model_copy(update={"examples": MEASURED[0].examples[:3]})],
                           embedder=embedder)  # fmt: skip
        after = candidate_matcher(store, "acme", "I want my money back", embedder=embedder, limit=2).stats()
        assert after is not refund.stats()
        assert after == tenants.get("acme", embedder=embedder).stats()
        assert candidate_matcher(store, "acme", "where is my parcel", embedder=embedder, limit=2).stats() is after

        # a calibrated tenant: its stored gate, whatever the message
        labelled = [("can I get my money back", ["refund"]), ("what is the weather like", [])]
        calibrated = calibrate_gate(whole, labelled)
        store.save_gate("acme", calibrated.to_dict())
        for message in ("I want my money back", "where is my parcel"):
            assert candidate_matcher(store, "acme", message, embedder=embedder, limit=2).gate() == calibrated
        assert tenants.get("acme", embedder=embedder).gate() == calibrated
    finally:
        store.close()
