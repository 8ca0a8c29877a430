"""Two ``norma serve`` processes sharing one PostgreSQL: a rule written through one is matched by the other within
1 s (each replica caches its tenant matchers and refreshes them when the tenant's version moves)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests._pgserver import fresh_database
from tests.service._server import serve_process
from tests.service.conftest import ADMIN_KEY, bearer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def database(pg_server_url: str) -> str:
    return fresh_database(pg_server_url, prefix="norma_service")


def test_a_rule_written_on_one_replica_is_matched_by_the_other_within_a_second(database: str, tmp_path: Path) -> None:
    env = {"NORMA_ADMIN_KEY": ADMIN_KEY}
    with (
        serve_process(["--db", database], log=tmp_path / "a.log", env=env, cwd=tmp_path) as (url_a, _),
        serve_process(["--db", database], log=tmp_path / "b.log", env=env, cwd=tmp_path) as (url_b, _),
        httpx.Client(timeout=30) as http,
    ):
        key = http.post(f"{url_a}/v1/tenants/shop/keys", json={"name": "bot"}, headers=bearer(ADMIN_KEY)).json()
        auth = bearer(key["secret"])
        first = {"rules": [{"id": "greeting", "condition_text": "customer says hello", "examples": ["hi there"]}]}
        assert http.post(f"{url_a}/v1/tenants/shop/rules", json=first, headers=auth).status_code == 200
        message = {"message": "my parcel never arrived, where is my order?"}
        before = http.post(f"{url_b}/v1/tenants/shop/match", json=message, headers=auth)
        assert before.status_code == 200, before.text
        assert "missing-parcel" not in [m["rule"]["id"] for m in before.json()["matches"]]

        rule = {
            "condition_text": "customer says their parcel or order never arrived",
            "action_text": "open a delivery investigation",
            "examples": ["my order never arrived", "where is my parcel"],
        }
        written = http.put(f"{url_a}/v1/tenants/shop/rules/missing-parcel", json=rule, headers=auth)
        assert written.status_code == 200
        written_at = time.monotonic()
        seen_after = None
        while time.monotonic() - written_at < 5:
            response = http.post(f"{url_b}/v1/tenants/shop/match", json=message, headers=auth)
            assert response.status_code == 200
            if "missing-parcel" in [m["rule"]["id"] for m in response.json()["matches"]]:
                seen_after = time.monotonic() - written_at
                break
            time.sleep(0.05)
        assert seen_after is not None, "replica B never matched the new rule"
        assert seen_after < 1.0, f"replica B matched the new rule only after {seen_after:.2f} s"

        # and a deletion through B disappears from A just as fast
        assert http.delete(f"{url_b}/v1/tenants/shop/rules/missing-parcel", headers=auth).status_code == 200
        deleted_at = time.monotonic()
        while time.monotonic() - deleted_at < 5:
            ids = [
                m["rule"]["id"]
                for m in http.post(f"{url_a}/v1/tenants/shop/match", json=message, headers=auth).json()["matches"]
            ]
            if "missing-parcel" not in ids:
                break
            time.sleep(0.05)
        assert time.monotonic() - deleted_at < 1.0
