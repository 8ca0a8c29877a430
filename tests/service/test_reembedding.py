"""A replica started with another encoder than the one its store's vectors were made with (issue #58, item 3): it
embeds those tenants' rules again in the background, is not ready (``/v1/ready`` 503, saying which tenant) until
that is done, and keeps the old encoder's vectors for the replicas still running it. A real SQLite file, the real
encoders, the app's real lifespan."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.embeddings import INT8_ENV, get_embedder
from norma.errors import StoreUnavailableError
from norma.service import create_app
from norma.service._outage import PROBE_INTERVAL, StoreHealth
from norma.service._reembed import needs_reembedding
from norma.store import RuleStore, open_store
from tests.service.conftest import RULES, _rule, make_settings

pytestmark = pytest.mark.model


class _Held:
    """The real store, whose read of one tenant's rules and vectors waits until the test lets it go (so the test
    sees the replica while it is re-embedding, without timing anything), and whose tenant list can fail once."""

    def __init__(self, store: RuleStore, tenant: str) -> None:
        self._store = store
        self._tenant = tenant
        self.reading = threading.Event()
        self.go = threading.Event()
        self.tenants_fail = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def tenants(self) -> list[str]:
        if self.tenants_fail:
            self.tenants_fail -= 1
            raise StoreUnavailableError("the database is away (test)")
        return self._store.tenants()

    def snapshot(self, tenant_id: str, model_id: str) -> Any:
        if tenant_id == self._tenant:
            self.reading.set()
            assert self.go.wait(60), "the test never let the read go"
        return self._store.snapshot(tenant_id, model_id)


def _app_store(tmp_path: Path) -> RuleStore:
    store = open_store(f"sqlite:///{tmp_path / 'norma.db'}")
    store.upsert_rules("acme", [_rule(r, "acme") for r in RULES])  # embedded as they are written: fp32
    store.upsert_rules("globex", [_rule(RULES[0], "globex")])
    return store


def test_which_tenants_need_it() -> None:
    assert needs_reembedding({"fp32": 3}, "int8")
    assert needs_reembedding({"fp32": 3, "int8": 1}, "int8")  # one rule of three is not enough
    assert not needs_reembedding({"fp32": 3, "int8": 3}, "int8")
    assert not needs_reembedding({"int8": 3}, "int8")
    assert not needs_reembedding({}, "int8")  # nothing stored: embedded on first use, as always


@pytest.mark.anyio
async def test_a_replica_with_the_other_encoder_is_ready_once_its_vectors_are_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _app_store(tmp_path)
    fp32, int8 = get_embedder(quantize=False).model_id, get_embedder(quantize=True).model_id
    assert store.vector_encoders("acme") == {fp32: 3}  # type: ignore[attr-defined]
    assert store.vector_encoders("globex") == {fp32: 1}  # type: ignore[attr-defined]
    monkeypatch.setenv(INT8_ENV, "1")  # the new replica runs the int8 encoder
    held = _Held(store, "acme")
    app = create_app(make_settings(), store=held)  # type: ignore[arg-type]
    try:
        async with app.router.lifespan_context(app):
            assert held.reading.wait(60)  # the background pass is reading acme's rules to embed them again
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
                waiting = await http.get("/v1/ready")
                assert waiting.status_code == 503
                assert waiting.headers["Retry-After"]
                checks = waiting.json()["checks"]
                assert checks["store"] == "ok"
                assert checks["embedder"] == "ok"
                assert checks["vectors"] == "embedding the rules of tenant 'acme' again (1 of 2 tenants)"
                held.go.set()
                assert app.state.norma.reembedding.wait(60)
                ready = await http.get("/v1/ready")
                assert ready.status_code == 200
                assert ready.json()["checks"] == {"store": "ok", "embedder": "ok"}  # as it always was
        encoders = store.vector_encoders("acme")  # type: ignore[attr-defined]
        assert encoders == {fp32: 3, int8: 3}  # the old replicas' vectors kept, the new ones complete
        assert store.vector_encoders("globex") == {fp32: 1, int8: 1}  # type: ignore[attr-defined]
    finally:
        held.go.set()
        store.close()


@pytest.mark.anyio
async def test_a_pass_the_store_interrupted_runs_again_at_the_next_readiness_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _app_store(tmp_path)
    monkeypatch.setenv(INT8_ENV, "1")
    held = _Held(store, "none")
    held.tenants_fail = 1  # the store is away when the replica starts
    app = create_app(make_settings(), store=held)  # type: ignore[arg-type]
    now = [1000.0]
    app.state.norma.health = StoreHealth(clock=lambda: now[0])  # the breaker's probe interval, on a test clock
    try:
        async with app.router.lifespan_context(app):
            state = app.state.norma
            assert state.reembedding.status().startswith("not checked: StoreUnavailableError")
            now[0] += PROBE_INTERVAL  # time to probe the store again
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
                first = await http.get("/v1/ready")  # the store is back: finds the tenants, starts embedding them
                assert first.json()["checks"]["store"] == "ok"
                assert state.reembedding.wait(60)
                ready = await http.get("/v1/ready")
                assert ready.status_code == 200, ready.text
        assert get_embedder(quantize=True).model_id in store.vector_encoders("acme")  # type: ignore[attr-defined]
    finally:
        store.close()
