"""Fixtures for the service tests: a real SQLite store, the app, an httpx client on the ASGI app, keys."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.matching import Rule
from norma.service import DemoTenant, ServiceSettings, create_app
from norma.store import RuleStore, open_store

ADMIN_KEY = "test-admin-key-0123456789abcdef"

RULES: list[dict[str, Any]] = [
    {
        "id": "refund",
        "condition_text": "customer asks for a refund",
        "action_text": "explain the refund policy",
        "priority": 10,
        "tags": ["billing"],
        "examples": ["I want my money back", "can I get a refund for my order"],
    },
    {
        "id": "lost-card",
        "condition_text": "customer lost their card or had it stolen",
        "action_text": "block the card at once",
        "priority": 50,
        "tags": ["cards"],
        "examples": ["I lost my card", "my wallet was stolen"],
    },
    {
        "id": "greeting",
        "condition_text": "customer says hello",
        "action_text": "greet them back",
        "examples": ["hi there", "good morning"],
    },
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuleStore]:
    path = tmp_path_factory.mktemp("store") / "norma.db"
    opened = open_store(f"sqlite:///{path}")
    opened.upsert_rules("acme", [_rule(r, "acme") for r in RULES])
    opened.upsert_rules("globex", [_rule(RULES[0], "globex")])
    yield opened
    opened.close()


def _rule(data: dict[str, Any], tenant: str) -> Rule:
    return Rule.from_mapping({**data, "tenant_id": tenant})


@pytest.fixture(scope="module")
def acme_key(store: RuleStore) -> str:
    return store.create_api_key("acme", name="tests")


@pytest.fixture(scope="module")
def globex_key(store: RuleStore) -> str:
    return store.create_api_key("globex", name="tests")


def make_settings(**changes: object) -> ServiceSettings:
    base: dict[str, object] = {"admin_key": ADMIN_KEY, "rate_limit": 0}
    base.update(changes)
    return ServiceSettings.model_validate(base)


@pytest.fixture
def settings() -> ServiceSettings:
    return make_settings()


def asgi_client(app: object) -> httpx.AsyncClient:
    """An httpx client on the ASGI ``app`` itself: real requests through the whole app, no socket."""
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://norma.test")  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def app_client(store: RuleStore, settings: ServiceSettings | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """:func:`asgi_client` on the service app over ``store`` (``make_settings()`` by default)."""
    async with asgi_client(create_app(settings or make_settings(), store=store)) as http:
        yield http


@pytest.fixture
async def client(store: RuleStore, settings: ServiceSettings) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(store, settings) as http:
        yield http


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="session")
def examples() -> Path:
    return Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless Chromium for the playground tests of one module (tests/service/_browser.py)."""
    from tests.service._browser import start_browser

    with start_browser() as driver:
        yield driver


@pytest.fixture(scope="module")
def demo(store: RuleStore, examples: Path) -> DemoTenant:
    """The example rulebooks in tenant ``demo``, as ``norma serve --demo`` loads them: scenarios, steps, a disabled
    rule, and the banking rules with their checks."""
    from norma.service import seed_demo_tenant

    return seed_demo_tenant(store.url, examples)


NEIGHBOURS_GATE = {
    "kind": "calibrated", "score": "similarity", "threshold": 0.4, "terms": {"target": "best_f1", "messages": 0},
}  # fmt: skip
"""A stored calibration with a target: a similarity threshold, the gate alone, so rules that pass it without
governing the message are neighbours (the default gate returns only the rules that govern)."""


@pytest.fixture(scope="module")
def demo_neighbours(store: RuleStore, demo: DemoTenant) -> tuple[str, str]:
    """(tenant, API key) of ``demo-neighbours``: the demo tenant's rules, calibrated to a similarity threshold of 0.4,
    so that matches come with neighbours."""
    tenant = "demo-neighbours"
    rules = [rule.model_copy(update={"tenant_id": tenant}) for rule in store.list_rules(demo.tenant)]
    store.upsert_rules(tenant, rules)
    store.save_gate(tenant, NEIGHBOURS_GATE)  # type: ignore[attr-defined]
    return tenant, store.create_api_key(tenant, name="tests")
