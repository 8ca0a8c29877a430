"""``seed_demo_tenant``: the example rulebooks in tenant ``demo`` and one live demo key (``norma serve --demo``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.errors import ConfigError
from norma.service import DEMO_KEY_NAME, DEMO_TENANT, DemoTenant, seed_demo_tenant
from norma.store import load_rulebook, open_store

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_seed_loads_every_rulebook_and_rotates_the_key(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    first = seed_demo_tenant(db, EXAMPLES)
    books = [p for p in sorted((EXAMPLES / "rulebooks").iterdir()) if p.suffix in {".yaml", ".yml", ".json"}]
    expected = sum(len(load_rulebook(path).rules) for path in books)  # not the labelled messages (.jsonl)
    assert isinstance(first, DemoTenant)
    assert (first.tenant, first.rules, first.store) == (DEMO_TENANT, expected, db)
    again = seed_demo_tenant(db, EXAMPLES)
    assert again.key != first.key
    assert again.version == first.version  # the same rules again: nothing changed
    store = open_store(db)
    try:
        keys = store.list_api_keys(DEMO_TENANT)
        assert len(store.list_rules(DEMO_TENANT)) == expected
        live = store.check_api_key(again.key)
        assert store.check_api_key(first.key) is None
    finally:
        store.close()
    assert [k.name for k in keys] == [DEMO_KEY_NAME, DEMO_KEY_NAME]
    assert live is not None
    assert live.tenant_id == DEMO_TENANT


def test_seed_without_rulebooks_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no rulebooks to load"):
        seed_demo_tenant(f"sqlite:///{tmp_path / 'norma.db'}", tmp_path)


def test_seed_defaults_to_the_examples_norma_ships(tmp_path: Path) -> None:
    shipped = seed_demo_tenant(f"sqlite:///{tmp_path / 'norma.db'}")  # a checkout: its examples/; a wheel: its own
    given = seed_demo_tenant(f"sqlite:///{tmp_path / 'other.db'}", EXAMPLES)
    assert shipped.rulebooks == given.rulebooks == str(EXAMPLES / "rulebooks")
    assert shipped.rules == given.rules > 10
