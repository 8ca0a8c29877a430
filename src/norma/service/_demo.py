"""The service's demo tenant: the example rulebooks norma ships loaded into tenant ``demo``, and one fresh API key.

``norma serve --demo`` (what ``make run`` starts) calls :func:`seed_demo_tenant` before the workers start, then
prints the key in the playground's address. Seeding again replaces the demo rules and revokes the previous demo
key, so one demo key is live at a time.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from norma._package_data import examples_folder
from norma.errors import ConfigError
from norma.rules import load_rulebook
from norma.store import open_store

__all__ = ["DEMO_KEY_NAME", "DEMO_TENANT", "DemoTenant", "seed_demo_tenant"]

DEMO_TENANT = "demo"
"""The tenant the demo loads the example rulebooks into."""

DEMO_KEY_NAME = "demo (norma serve --demo)"
"""The name of the key the demo creates; the previous demo keys are revoked each time."""

_RULEBOOK_SUFFIXES = (".yaml", ".yml", ".json")


class DemoTenant(BaseModel):
    """What :func:`seed_demo_tenant` did: the tenant, its rules and version, the new key and the store."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)

    tenant: str
    """The demo tenant (:data:`DEMO_TENANT`)."""
    rules: int
    """Rules loaded from the example rulebooks."""
    rulebooks: str
    """The folder they were read from (for a wheel, inside the installed package)."""
    version: int
    """The tenant's rule-set version after loading them."""
    key: str
    """The new demo API key's secret (only its hash is stored: shown once)."""
    store: str
    """The store's URL (without credentials)."""


def seed_demo_tenant(db_url: str | None, examples: Path | None = None) -> DemoTenant:
    """Load ``<examples>/rulebooks/*`` (YAML / JSON) into :data:`DEMO_TENANT` and create a fresh demo key.

    Args:
        db_url: the rule store (:func:`norma.store.open_store`'s URL; None: its default).
        examples: an examples folder; None: the examples norma ships (in the installed package, or the source
            checkout's ``examples/``).

    Raises:
        ConfigError: the folder's ``rulebooks/`` holds no rulebook (or norma's examples are not installed).
        RulebookError: a rulebook has problems (nothing is written).
    """
    folder = (examples if examples is not None else examples_folder()) / "rulebooks"
    files = sorted(p for p in folder.glob("*") if p.suffix.lower() in _RULEBOOK_SUFFIXES)
    if not files:
        raise ConfigError(
            "no rulebooks to load", source=str(folder), hint="pass --examples DIR, a folder with rulebooks/*.yaml"
        )
    rules = [rule.model_copy(update={"tenant_id": DEMO_TENANT}) for path in files for rule in load_rulebook(path).rules]
    store = open_store(db_url)
    try:
        version = store.upsert_rules(DEMO_TENANT, rules)
        for key in store.list_api_keys(DEMO_TENANT):
            if key.name == DEMO_KEY_NAME and key.revoked_at is None:
                store.revoke_api_key(key.key_id)
        secret = store.create_api_key(DEMO_TENANT, name=DEMO_KEY_NAME)
        url = store.url
    finally:
        store.close()
    return DemoTenant(
        tenant=DEMO_TENANT, rules=len(rules), rulebooks=str(folder), version=version, key=secret, store=url
    )
