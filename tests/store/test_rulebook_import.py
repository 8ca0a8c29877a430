"""A rulebook into a tenant of the store and out again (both backends); the reader itself is tests/rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from norma.embeddings import Embedder
from norma.errors import InvalidInputError
from norma.store import RulebookError, RuleStore, import_rulebook, load_rulebook
from tests.conftest import EXAMPLES

BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"


def test_an_invalid_file_writes_nothing(store: RuleStore, tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "half.json"
    good = {"id": "good", "condition_text": "customer says hello"}
    path.write_text(json.dumps({"tenant": "acme", "rules": [good, {"id": "bad"}]}), encoding="utf-8")
    with pytest.raises(RulebookError):
        import_rulebook(store, path, embedder=embedder)
    assert store.version("acme") == 0
    assert store.list_rules("acme") == []
    assert store.tenants() == []


def test_import_needs_a_tenant(store: RuleStore, embedder: Embedder) -> None:
    with pytest.raises(InvalidInputError, match="names no tenant"):
        import_rulebook(store, [{"id": "a", "condition_text": "x"}], embedder=embedder)


def test_import_then_export_round_trips(store: RuleStore, embedder: Embedder, tmp_path: Path) -> None:
    book, version = import_rulebook(store, BANKING, embedder=embedder)
    assert version == 1
    from norma.store import export_rulebook

    for fmt in ("yaml", "json"):
        path = tmp_path / f"out.{fmt}"
        path.write_text(export_rulebook(store, "northwind-bank", fmt=fmt), encoding="utf-8")  # type: ignore[arg-type]
        again = load_rulebook(path)
        assert sorted(again.rules, key=lambda r: r.id) == sorted(book.rules, key=lambda r: r.id)
    # importing the export changes nothing
    assert import_rulebook(store, tmp_path / "out.yaml", embedder=embedder)[1] == 1
