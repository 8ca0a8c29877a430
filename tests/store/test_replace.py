"""upsert_rules(..., prune=True) (a tenant becomes exactly a list of rules, in one version) and rulebook_changes
(a dry run), on SQLite and PostgreSQL alike; open_store(create=False) and the explicit relative SQLite URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.embeddings import Embedder
from norma.errors import ConfigError, InvalidInputError, NotFoundError
from norma.matching import Rule
from norma.store import RulebookChanges, RuleStore, import_rulebook, open_store, rulebook_changes
from norma.store._open import sqlite_path


def _rules(*ids: str, text: str = "customer asks about {id}") -> list[Rule]:
    return [Rule(id=i, condition_text=text.format(id=i)) for i in ids]


def test_replace_is_one_version_deleting_what_is_left_out(store: RuleStore, embedder: Embedder) -> None:
    assert store.upsert_rules("acme", _rules("a", "b", "c", "d", "e", "f"), embedder=embedder) == 1
    changed = [Rule(id="a", condition_text="customer asks about a refund"), *_rules("b")]
    version = store.upsert_rules("acme", changed, embedder=embedder, prune=True)
    assert version == 2
    assert [r.id for r in store.list_rules("acme")] == ["a", "b"]
    assert store.get_rule("acme", "a").condition_text == "customer asks about a refund"
    gone = store.history("acme", "f")
    assert [(v.version, v.tenant_version, v.rule is None) for v in gone] == [(1, 1, False), (2, 2, True)]
    assert [(v.version, v.tenant_version) for v in store.history("acme", "a")] == [(1, 1), (2, 2)]
    assert [v.version for v in store.history("acme", "b")] == [1]  # unchanged: no new history row
    assert set(store.load_vectors("acme", embedder.model_id)) == {"a", "b"}
    _, present, deleted, _ = store.changes_since("acme", 1, embedder.model_id)
    assert ([r.id for r in present], deleted) == (["a"], ["c", "d", "e", "f"])


def test_replace_with_the_same_rules_changes_nothing(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", _rules("a", "b"), embedder=embedder)
    assert store.upsert_rules("acme", _rules("b", "a"), embedder=embedder, prune=True) == 1
    assert store.upsert_rules("acme", [], embedder=embedder, prune=True) == 2
    assert store.list_rules("acme") == []
    assert store.upsert_rules("acme", [], embedder=embedder, prune=True) == 2


def test_replace_leaves_other_tenants_alone(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", _rules("a", "b"), embedder=embedder)
    store.upsert_rules("globex", _rules("a", "z"), embedder=embedder)
    store.upsert_rules("acme", _rules("b"), embedder=embedder, prune=True)
    assert [r.id for r in store.list_rules("globex")] == ["a", "z"]
    assert store.version("globex") == 1


def test_a_failed_replace_writes_nothing(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", _rules("a", "b"), embedder=embedder)
    with pytest.raises(InvalidInputError, match="appears twice"):
        store.upsert_rules("acme", [*_rules("a"), *_rules("a")], embedder=embedder, prune=True)
    assert [r.id for r in store.list_rules("acme")] == ["a", "b"]
    assert store.version("acme") == 1


def test_rulebook_changes_and_a_pruning_import(store: RuleStore, embedder: Embedder) -> None:
    store.upsert_rules("acme", _rules("a", "b", "c"), embedder=embedder)
    book = {"tenant": "acme", "rules": [r.to_dict() for r in _rules("a", "d")]}
    book["rules"][0]["priority"] = 7
    _, keep = rulebook_changes(store, book)
    assert keep == RulebookChanges(tenant_id="acme", added=("d",), updated=("a",), unchanged=("b", "c"))
    _, prune = rulebook_changes(store, book, prune=True)
    assert prune == RulebookChanges(tenant_id="acme", added=("d",), updated=("a",), deleted=("b", "c"))
    assert store.version("acme") == 1  # a dry run writes nothing
    _, version = import_rulebook(store, book, prune=True, embedder=embedder)
    assert version == 2
    assert [(r.id, r.priority) for r in store.list_rules("acme")] == [("a", 7), ("d", 0)]
    _, after = rulebook_changes(store, book, prune=True)
    assert after == RulebookChanges(tenant_id="acme", unchanged=("a", "d"))
    assert not after.changed


def test_open_store_without_create_never_creates(tmp_path: Path) -> None:
    missing = tmp_path / "nested" / "norma.db"
    with pytest.raises(NotFoundError) as caught:
        open_store(f"sqlite:///{missing}", create=False)
    assert str(caught.value) == (
        f"no store at {missing} (check --db / $NORMA_DB_URL, or create the store by importing rules into it)"
    )
    assert not (tmp_path / "nested").exists()
    open_store(f"sqlite:///{missing}").close()
    open_store(f"sqlite:///{missing}", create=False).close()


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:////abs/x.db", "/abs/x.db"),
        ("sqlite:///./rel/x.db", "./rel/x.db"),
        ("sqlite:///../up/x.db", "../up/x.db"),
    ],
)
def test_sqlite_paths(url: str, path: str) -> None:
    assert sqlite_path(url) == path


def test_a_relative_sqlite_url_must_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        open_store("sqlite:///data/x.db")
    assert str(caught.value) == (
        "the SQLite URL 'sqlite:///data/x.db' names a relative path without saying so (write sqlite:////data/x.db "
        "for the absolute path /data/x.db, or sqlite:///./data/x.db for data/x.db under the working directory)"
    )
    assert list(tmp_path.iterdir()) == []
    store = open_store("sqlite:///./data/x.db")
    try:
        assert store.url == "sqlite:///./data/x.db"  # a URL open_store reads back as is
        assert (tmp_path / "data" / "x.db").is_file()
    finally:
        store.close()
