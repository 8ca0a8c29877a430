"""``norma.Tenants`` (issue #57): a store's tenants, each a ``Norma`` at its current rules version, built once per
version, with one judge and one message embedder; what a server answers from while its store is away. A real SQLite
file and the real embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest

import norma
from norma.embeddings import get_embedder
from norma.errors import InvalidInputError
from norma.llm import Judge, OllamaClient
from norma.rules import Rule
from norma.store import RuleStore, open_store
from tests.store.conftest import CountingEmbedder

pytestmark = pytest.mark.model

RULES = [
    Rule(
        id="lost-card",
        tenant_id="acme",
        condition_text="the customer lost their card",
        action_text="block the card at once",
        examples=["I lost my card", "my card was stolen"],
    ),
    Rule(
        id="refund",
        tenant_id="acme",
        condition_text="the customer asks for a refund",
        action_text="explain the refund policy",
        examples=["I want my money back"],
    ),
]


@pytest.fixture
def store(tmp_path: Path) -> RuleStore:
    opened = open_store(f"sqlite:///{tmp_path / 'norma.db'}")
    opened.upsert_rules("acme", RULES)
    yield opened  # type: ignore[misc]
    opened.close()


def test_a_tenant_at_its_current_version_built_once(store: RuleStore) -> None:
    tenants = norma.Tenants(store, judge=None)
    assert tenants.cached("acme") is None  # nothing served yet
    first = tenants.get("acme")
    assert isinstance(first, norma.Norma)
    assert first.rules_version == store.version("acme") == 1
    assert sorted(r.id for r in first.rules) == ["lost-card", "refund"]
    assert tenants.get("acme") is first  # the same version: the same object
    assert [m.rule.id for m in first.match("I lost my card yesterday")] == ["lost-card"]
    cached = tenants.cached("acme")
    assert cached is not None
    assert cached[0] is first
    assert cached[1] > 0


def test_a_new_version_is_a_new_norma(store: RuleStore) -> None:
    tenants = norma.Tenants(store, judge=None)
    tenants.matchers.refresh_interval = 0  # look at the store's version on every get
    before = tenants.get("acme")
    store.delete_rules("acme", ["refund"])
    after = tenants.get("acme")
    assert after is not before
    assert after.rules_version == 2
    assert [r.id for r in after.rules] == ["lost-card"]


def test_messages_go_through_the_tenants_embedder(store: RuleStore) -> None:
    counting = CountingEmbedder(get_embedder())
    tenants = norma.Tenants(store, judge=None, embedder=counting)
    rules = tenants.get("acme")
    rules.match("I lost my card yesterday")
    report = rules.check("please refund me", "Here is our refund policy.")
    assert counting.texts == ["I lost my card yesterday", "please refund me"]
    assert report.tenant_id == "acme"


def test_one_judge_made_once(store: RuleStore) -> None:
    judge = Judge(OllamaClient("http://127.0.0.1:9", "judge-model"))  # never asked here
    tenants = norma.Tenants(store, judge=judge)
    assert tenants.judge() is judge
    assert tenants.get("acme").judge is judge  # the tenants' one judge, in every Norma
    assert norma.Tenants(store, judge=None).judge() is None
    with pytest.raises(InvalidInputError, match="judge must be"):
        norma.Tenants(store, judge="sometimes").judge()  # type: ignore[arg-type]


def test_a_tenant_without_rules_and_a_bad_tenant_id(store: RuleStore) -> None:
    empty = norma.Tenants(store).get("globex")
    assert empty.rules == ()
    assert empty.rules_version == 0
    with pytest.raises(InvalidInputError, match="tenant"):
        norma.Tenants(store).get("")
