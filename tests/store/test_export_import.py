"""Export -> import is an identity on everything the store accepts (issue 23, item 4): rules with arbitrary Unicode
text (U+0085, U+2028, NUL, astral characters, BOMs...) and arbitrary JSON metadata up to the deepest the model
allows, written as YAML and as JSON, through the files `norma rules export` / `import` use, on SQLite and on a real
PostgreSQL."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from norma._safety import load_json, load_yaml
from norma.embeddings import CachedEmbedder, Embedder
from norma.errors import InvalidInputError
from norma.rules import MAX_METADATA_DEPTH, Rule, Scope, load_rulebook
from norma.store import RuleStore, export_rulebook, import_rulebook
from tests.rules._values import METADATA_VALUES, RULE_TEXTS, nested

_tenants = itertools.count()

_IDS = st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=30).map(str.strip).filter(bool)
_METADATA = st.one_of(
    st.dictionaries(st.text(max_size=12), METADATA_VALUES, max_size=4),
    st.integers(2, MAX_METADATA_DEPTH).map(nested),
)


@st.composite
def _rules(draw: st.DrawFn) -> dict[str, Any]:
    scope = draw(st.sampled_from(list(Scope)))
    return {
        "id": draw(_IDS),
        "condition_text": draw(RULE_TEXTS),
        "action_text": draw(st.one_of(st.just(""), st.text(max_size=40))),
        "scope": scope,
        "scenario_id": None if scope is Scope.GLOBAL else draw(_IDS),
        "step_id": draw(_IDS) if scope is Scope.STEP else None,
        "priority": draw(st.integers(-1_000_000, 1_000_000)),
        "enabled": draw(st.booleans()),
        "tags": draw(st.lists(st.text(max_size=12), max_size=3)),
        "examples": draw(st.lists(RULE_TEXTS, max_size=2)),
        "metadata": draw(_METADATA),
    }


@pytest.fixture(scope="module")
def cached(embedder: Embedder) -> Embedder:
    """The real embedder, each text embedded once for the module: an import after an export embeds every rule text
    again (what is checked is the rules that come back, not their vectors)."""
    return CachedEmbedder(embedder)


def _accepted(fields: list[dict[str, Any]], tenant: str) -> list[Rule]:
    rules = []
    for item in fields:
        try:
            rules.append(Rule.from_mapping({**item, "tenant_id": tenant}))
        except InvalidInputError:  # the strategy draws a few the model refuses (blank ids...): not the point here
            continue
    return list({r.id: r for r in rules}.values())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_rules(), min_size=1, max_size=4))
@example(
    [
        {"id": "nel", "condition_text": "x\x85\u2028y", "metadata": {"k\x85": ["\u2029", "x\x85\u2028y"]}},
        {"id": "deep", "condition_text": "deep metadata", "metadata": nested(MAX_METADATA_DEPTH)},
    ]
)
def test_export_then_import_gives_the_same_rules(
    store: RuleStore, cached: Embedder, tmp_path: Path, fields: list[dict[str, Any]]
) -> None:
    tenant = f"roundtrip-{next(_tenants)}"
    rules = _accepted(fields, tenant)
    if not rules:
        return
    store.upsert_rules(tenant, rules, embedder=cached)
    stored = {r.id: r for r in store.list_rules(tenant)}
    assert stored == {r.id: r for r in rules}
    for fmt in ("yaml", "json"):
        path = tmp_path / f"{tenant}.{fmt}"
        path.write_text(export_rulebook(store, tenant, fmt=fmt), encoding="utf-8")  # as `norma rules export -o`
        store.delete_rules(tenant, list(stored))
        assert store.list_rules(tenant) == []
        import_rulebook(store, path, embedder=cached)  # as `norma rules import FILE`
        assert {r.id: r for r in store.list_rules(tenant)} == stored, fmt


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_next_line_and_line_separators_survive_an_export(store: RuleStore, embedder: Embedder, fmt: str) -> None:
    """The probe of issue 23: 'x\\x85\\u2028y' came back from a YAML export as 'x\\u2028y'."""
    rule = Rule(id="nel", tenant_id="acme", condition_text="x\x85\u2028y", examples=["a\x85b"], tags=["\x85"])
    store.upsert_rules("acme", [rule], embedder=embedder)
    text = export_rulebook(store, "acme", fmt=fmt)  # type: ignore[arg-type]
    data = load_json(text) if fmt == "json" else load_yaml(text)
    assert list(load_rulebook(data).rules) == [rule]
