"""Checks are stored with their rules, versioned, and survive export -> import identically (SQLite and PostgreSQL).
A change of checks only makes a new rule version without re-embedding: the vectors depend on the rule's texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.embeddings import Embedder
from norma.rules import Rule
from norma.store import RuleStore, export_rulebook, import_rulebook
from tests.store.conftest import CountingEmbedder


def _refund(checks: list[dict[str, object]]) -> Rule:
    return Rule(
        id="refund",
        tenant_id="acme",
        condition_text="customer asks for a refund",
        action_text="explain the refund policy",
        examples=["I want my money back"],
        checks=checks,
    )


CHECKS: list[dict[str, object]] = [
    {"id": "mentions", "kind": "contains", "terms": ["refund policy", "remboursement"], "mode": "all"},
    {"id": "no-url", "kind": "not_regex", "pattern": r"(?i)https?://\S+", "severity": "warning", "weight": 0.5},
    {"id": "short", "kind": "max_words", "limit": 120},
    {"id": "shape", "kind": "json", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
    {"id": "no-card", "kind": "no_pii", "kinds": ["card", "iban"], "when": "always"},
    {"id": "polite", "kind": "judge", "criterion": "the answer is polite, « même en français »", "votes": 3},
]


def test_checks_stored_and_a_change_of_checks_only_is_a_new_version_without_re_embedding(
    store: RuleStore, counting: CountingEmbedder
) -> None:
    first = _refund(CHECKS[:2])
    assert store.upsert_rules("acme", [first], embedder=counting) == 1
    assert counting.texts == ["customer asks for a refund explain the refund policy", "I want my money back"]
    counting.texts.clear()
    assert store.get_rule("acme", "refund") == first
    assert store.upsert_rules("acme", [first], embedder=counting) == 1  # the same checks: nothing changes
    second = _refund(CHECKS)
    assert store.upsert_rules("acme", [second], embedder=counting) == 2
    assert counting.texts == []  # same texts, same vectors
    assert store.get_rule("acme", "refund") == second
    history = store.history("acme", "refund")
    assert [(h.version, h.rule) for h in history] == [(1, first), (2, second)]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_checks_survive_export_then_import(store: RuleStore, embedder: Embedder, tmp_path: Path, fmt: str) -> None:
    rules = [_refund(CHECKS), Rule(id="plain", tenant_id="acme", condition_text="customer says hello")]
    store.upsert_rules("acme", rules, embedder=embedder)
    path = tmp_path / f"acme.{fmt}"
    path.write_text(export_rulebook(store, "acme", fmt=fmt), encoding="utf-8")  # type: ignore[arg-type]
    store.delete_rules("acme", ["refund", "plain"])
    assert store.list_rules("acme") == []
    import_rulebook(store, path, embedder=embedder)
    assert {r.id: r for r in store.list_rules("acme")} == {r.id: r for r in rules}
