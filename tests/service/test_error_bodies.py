"""Error bodies name fields and ids, never the server's paths (issue 23, item 7): an unreachable store, audit
documents that cannot be loaded, any message holding a configured path; the server log keeps the detail."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from norma.errors import InvalidInputError
from norma.service import create_app
from norma.service._errors import REDACTED, problem_response
from norma.store import RuleStore
from tests.conftest import EXAMPLES
from tests.service._server import serve_app
from tests.service.conftest import ADMIN_KEY, asgi_client, bearer, make_settings

pytestmark = pytest.mark.anyio

AUDIT = {"input": "what does the policy say?", "output": "It says so.", "context_type": "technical"}


@pytest.fixture
def unreachable(tmp_path: Path) -> str:
    """A SQLite store that cannot be opened: its folder is a regular file."""
    blocker = tmp_path / "server-secret-folder"
    blocker.write_text("not a folder")
    return f"sqlite:///{blocker}/norma.db"


def _assert_no_path(text: str, *paths: object) -> None:
    for path in paths:
        assert str(path) not in text, text
    assert "server-secret-folder" not in text, text
    assert "/tmp" not in text, text


async def test_an_unreachable_store_is_503_naming_no_path(
    unreachable: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(make_settings(db_url=unreachable))
    caplog.set_level(logging.WARNING, logger="norma.service")
    async with asgi_client(app) as client:
        for key in ("nrm_000000000000_bogus", ADMIN_KEY):  # the bogus key is looked up in the store first
            response = await client.get("/v1/tenants/acme/rules", headers=bearer(key))
            assert response.status_code == 503
            assert response.json() == {
                "type": "urn:norma:problem:service-unavailable",
                "title": "service unavailable",
                "status": 503,
                "detail": "the rule store is not available",
                "hint": "retry later; the server log has the details",
            }
            _assert_no_path(response.text, tmp_path)
    assert any("server-secret-folder" in r.getMessage() for r in caplog.records)  # the log keeps the detail


def test_an_unreachable_store_is_503_naming_no_path_on_the_wire(unreachable: str, tmp_path: Path) -> None:
    app = create_app(make_settings(db_url=unreachable))
    with serve_app(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        for key in ("nrm_000000000000_bogus", ADMIN_KEY):
            response = http.post("/v1/tenants/acme/match", json={"message": "hi"}, headers=bearer(key))
            assert response.status_code == 503
            assert response.json()["detail"] == "the rule store is not available"
            _assert_no_path(response.text, tmp_path)


async def test_an_unreachable_postgres_names_no_host() -> None:
    app = create_app(make_settings(db_url="postgresql://nobody:pw@127.0.0.1:1/secretdb?connect_timeout=2"))
    async with asgi_client(app) as client:
        response = await client.get("/v1/tenants/acme/rules", headers=bearer(ADMIN_KEY))
    assert response.status_code == 503
    assert response.json()["detail"] == "the rule store is unreachable; nothing was written"
    assert response.headers["retry-after"] == "1"
    for leak in ("127.0.0.1", "secretdb", "nobody", "postgresql", "Connection refused"):
        assert leak not in response.text


@pytest.fixture
def broken_docs(tmp_path: Path) -> Path:
    """An audit documents folder holding a symlink that leads out of it (the loader refuses it)."""
    folder = tmp_path / "server-secret-folder" / "docs"
    folder.mkdir(parents=True)
    for document in (EXAMPLES / "audit" / "docs").iterdir():
        (folder / document.name).write_bytes(document.read_bytes())
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n")
    os.symlink(outside, folder / "zz-link.md")
    return folder


@pytest.mark.parametrize("setup", ["symlink out", "missing folder"])
async def test_audit_documents_that_cannot_load_are_503_naming_no_folder(
    store: RuleStore, broken_docs: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, setup: str
) -> None:
    folder = broken_docs if setup == "symlink out" else tmp_path / "server-secret-folder" / "missing"
    app = create_app(make_settings(audit_docs=folder), store=store)
    caplog.set_level(logging.WARNING, logger="norma.service")
    async with asgi_client(app) as client:
        response = await client.post("/v1/audit", json=AUDIT, headers=bearer(ADMIN_KEY))
    assert response.status_code == 503, response.text
    assert response.json()["detail"] == "the server is not configured for this request"
    _assert_no_path(response.text, folder, tmp_path)
    assert any(str(folder) in r.getMessage() for r in caplog.records)


@pytest.fixture
async def leaky(store: RuleStore, tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Path]]:
    """An app with a route whose 400 message names the configured documents folder."""
    folder = tmp_path / "server-secret-folder"
    folder.mkdir()
    app = create_app(make_settings(audit_docs=folder), store=store)

    @app.get("/v1/leaky")
    async def leaky_route() -> None:
        raise InvalidInputError(
            f"document name 'x.md' resolves outside {folder.resolve()} (symlink?)",
            hint=f"give the document as a plain relative name inside {folder}",
        )

    async with asgi_client(app) as client:
        yield client, folder


async def test_a_4xx_message_holding_a_server_path_has_it_removed(leaky: tuple[httpx.AsyncClient, Path]) -> None:
    client, folder = leaky
    response = await client.get("/v1/leaky")
    assert response.status_code == 400
    problem = response.json()
    assert problem["detail"] == f"document name 'x.md' resolves outside {REDACTED} (symlink?)"
    assert problem["hint"] == f"give the document as a plain relative name inside {REDACTED}"
    _assert_no_path(response.text, folder)


def test_a_problem_holding_text_that_is_not_unicode_still_renders() -> None:
    response = problem_response(400, "rule '\ud800' is invalid", field="rules[0].id")
    assert response.status_code == 400
    assert b"\\ud800" in response.body
