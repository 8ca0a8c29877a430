"""Property-based API testing from the OpenAPI schema (schemathesis): whatever the generated request, no 5xx.

The examples are bounded (12 per operation, derandomised in CI; set ``NORMA_SCHEMATHESIS_EXAMPLES`` for a longer
hunt) so the run stays within seconds; the admin key is sent so the tenant routes are exercised past
authentication.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from norma.service import create_app
from norma.store import open_store
from tests.service._chat_upstream import ChatUpstream
from tests.service.conftest import ADMIN_KEY, RULES, make_settings

_STORE_DIR = Path(__import__("tempfile").mkdtemp(prefix="norma-schemathesis-"))
_STORE = open_store(f"sqlite:///{_STORE_DIR / 'norma.db'}")
_UPSTREAM = ChatUpstream(record=False).__enter__()  # the guarded endpoint's model: a loopback server, up all along
_DOCS = Path(__file__).resolve().parents[2] / "examples" / "audit" / "docs"
_APP = create_app(make_settings(audit_docs=_DOCS, request_timeout=20, upstream_url=_UPSTREAM.url), store=_STORE)
schema = schemathesis.openapi.from_asgi("/openapi.json", _APP)

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("NORMA_SCHEMATHESIS_EXAMPLES", "12"))
"""Examples per operation: 12 in `make test`; set the variable for a longer hunt."""


@pytest.fixture(scope="module", autouse=True)
def _seeded() -> None:
    from norma.matching import Rule

    _STORE.upsert_rules("acme", [Rule.from_mapping({**r, "tenant_id": "acme"}) for r in RULES])


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: schemathesis.Case) -> None:  # type: ignore[type-arg]
    response = case.call(headers={"Authorization": f"Bearer {ADMIN_KEY}"})
    assert response.status_code < 500, (case.method, case.formatted_path, response.status_code, response.text[:500])
    if response.status_code >= 400:
        assert response.headers["content-type"] == ["application/problem+json"]
        assert response.json()["status"] == response.status_code
