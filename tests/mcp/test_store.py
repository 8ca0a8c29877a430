"""``norma mcp --store URL`` over stdio: a tenant imported into a real SQLite store from the example rulebook."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from norma.store import import_rulebook, open_store
from tests.conftest import EXAMPLES
from tests.mcp._client import Session, stdio_session, text

BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"
TENANT = "northwind-bank"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    url = f"sqlite:///{tmp_path_factory.mktemp('mcp-store') / 'norma.db'}"
    store = open_store(url)
    try:
        import_rulebook(store, BANKING, tenant_id=TENANT)
    finally:
        store.close()
    with stdio_session("--store", url) as session:
        yield session


def _ids() -> list[str]:
    return sorted(rule["id"] for rule in yaml.safe_load(BANKING.read_text(encoding="utf-8"))["rules"])


def test_list_rules_of_a_tenant(server: Session) -> None:
    listed = server.ok("list_rules", tenant=TENANT)
    assert (listed["tenant"], listed["count"]) == (TENANT, len(_ids()))
    assert [rule["id"] for rule in listed["rules"]] == _ids()
    lost = next(rule for rule in listed["rules"] if rule["id"] == "lost-or-stolen-card")
    assert (lost["priority"], lost["scope"], lost["tags"]) == (90, "global", ["cards", "urgent"])


@pytest.mark.model
def test_match_rules_against_a_tenant(server: Session) -> None:
    found = server.ok("match_rules", message="my card has gone missing, I had it at the supermarket", tenant=TENANT)
    assert (found["tenant"], found["rules"]) == (TENANT, len(_ids()))
    assert list(found) == ["message", "rules", "matches", "gate", "tenant"]  # as before: the tenant last
    assert found["matches"][0]["rule_id"] == "lost-or-stolen-card"


def test_an_unknown_tenant_is_a_tool_error_naming_the_known_ones(server: Session) -> None:
    result = server.call("list_rules", tenant="ghost")
    assert result.is_error
    lines = text(result).splitlines()
    assert lines[0].startswith("NotFoundError: tenant 'ghost' has no rules in sqlite:///")
    assert lines[1:] == ["where: tenant", f"hint: the store's tenants: {TENANT}"]
    assert result.structured_content["hint"] == f"the store's tenants: {TENANT}"


def test_without_a_tenant_the_store_server_asks_for_one(server: Session) -> None:
    result = server.call("match_rules", message="hello")
    assert result.is_error
    assert text(result).splitlines() == [
        "ConfigError: this server serves no rulebook",
        "where: tenant",
        "hint: give the tenant argument: a tenant of the served store",
    ]
    assert server.ok("list_rules", tenant=TENANT)["count"] == len(_ids())


@pytest.mark.model
def test_check_turn_against_a_tenant(server: Session) -> None:
    output = "The balance of the account linked to card 4111 1111 1111 1111 is 1,204.50 GBP."
    report = server.ok("check_turn", message="what is the balance on my account", output=output, tenant=TENANT)
    assert (report["tenant"], report["tenant_id"], report["verdict"]) == (TENANT, TENANT, "fail")
    assert report["rules_version"] == 1  # the store's first version of the imported tenant
    failed = [(c["rule_id"], c["check_id"]) for r in report["rules"] for c in r["checks"] if c["status"] == "fail"]
    assert ("never-ask-full-pin", "no-card-number") in failed
    ghost = server.call("check_turn", message="hello", output="hi", tenant="ghost")
    assert ghost.is_error
    assert text(ghost).splitlines()[0].startswith("NotFoundError: tenant 'ghost' has no rules in sqlite:///")
