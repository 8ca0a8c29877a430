"""The app over a real socket (uvicorn on a loopback port) and ``norma serve`` as a process: the same answers as in
process, the body cap on the wire, the demo start-up of ``make run``, and a graceful shutdown on SIGTERM."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from norma.service import create_app, seed_demo_tenant
from norma.store import RuleStore, open_store
from tests.service._server import serve_app, serve_process
from tests.service.conftest import ADMIN_KEY, bearer, make_settings

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(store: RuleStore) -> Iterator[str]:
    app = create_app(make_settings(max_body_bytes=4096), store=store)
    with serve_app(app) as url:
        yield url


def test_routes_over_a_real_socket(server: str, acme_key: str, globex_key: str) -> None:
    with httpx.Client(base_url=server, timeout=30) as http:
        assert http.get("/v1/health").json()["status"] == "ok"
        assert http.get("/v1/tenants/acme/rules").status_code == 401
        rules = http.get("/v1/tenants/acme/rules", headers=bearer(acme_key))
        assert rules.status_code == 200
        assert [r["id"] for r in rules.json()["rules"]] == ["greeting", "lost-card", "refund"]
        assert http.get("/v1/tenants/acme/rules", headers=bearer(globex_key)).status_code == 404
        page = http.get("/")
        assert "norma playground" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]


def test_body_cap_on_the_wire(server: str, acme_key: str) -> None:
    body = json.dumps({"rules": [{"id": "big", "condition_text": "x" * 10_000}]})
    with httpx.Client(base_url=server, timeout=30) as http:
        response = http.post(
            "/v1/tenants/acme/rules", content=body, headers={**bearer(acme_key), "content-type": "application/json"}
        )
        assert response.status_code == 413
        assert response.json()["status"] == 413

        def chunks() -> Iterator[bytes]:
            for _ in range(20):
                yield b" " * 512

        chunked = http.post(
            "/v1/tenants/acme/match", content=chunks(), headers={**bearer(acme_key), "content-type": "application/json"}
        )
        assert chunked.status_code == 413


@pytest.mark.slow
def test_norma_serve_demo_with_two_workers_then_a_graceful_stop(tmp_path: Path) -> None:
    """What `make run` starts (plus a second worker and an admin key): banner, keys, routes on both workers."""
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    log = tmp_path / "serve.log"
    args = ["--demo", "--workers", "2", "--db", db, "--format", "json"]
    with serve_process(args, log=log, env={"NORMA_ADMIN_KEY": ADMIN_KEY}, cwd=REPO) as (url, proc):
        banner = json.loads(_read_json_banner(proc))
        _wait_for_log(log, "Application startup complete", count=2)  # both workers, not just the first to answer
        key = banner["demo"]["key"]
        assert banner["playground"] == f"{url}/#key={key}"
        assert banner["demo"]["rules"] > 10
        assert f"{url}/v1/tenants/demo/match" in banner["curl"]
        assert key in banner["curl"]
        with httpx.Client(base_url=url, timeout=30) as http:
            for _ in range(4):  # whichever worker answers, the demo key (in the shared store) works
                rules = http.get("/v1/tenants/demo/rules", headers=bearer(key)).json()
                assert len(rules["rules"]) == banner["demo"]["rules"]
            created = http.post("/v1/tenants/t1/keys", json={"name": "x"}, headers=bearer(ADMIN_KEY))
            assert created.status_code == 201
            assert http.get("/v1/tenants/t1", headers=bearer(created.json()["secret"])).status_code == 200
        # graceful: a request in flight when SIGTERM arrives is still answered, then the server exits 0. "In
        # flight" is an event, not a pause: the request asks `Expect: 100-continue`, and the server says "100
        # Continue" only once a worker has parsed it and the app reads its body; the body is sent after the signal.
        body = json.dumps({"name": "Maximilian Alexander Richardson", "count": 100, "seed": 1}).encode()
        with _request_waiting_for_its_body(url, "/v1/names/generate", key, body) as sock:
            proc.send_signal(signal.SIGTERM)
            sock.sendall(body)
            answer = _read_to_close(sock)
        assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
        assert proc.wait(timeout=20) == 0
    text = log.read_text(encoding="utf-8")
    assert key not in text
    assert ADMIN_KEY not in text
    lines = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert any(line.get("path") == "/v1/tenants/demo/rules" and line.get("status") == 200 for line in lines)
    assert len({line.get("message") for line in lines if "Started server process" in line["message"]}) == 2
    errors = [line for line in lines if line["level"] == "error"]
    assert not errors, errors
    # a second --demo start revokes the first demo key: one live demo key at a time
    again = seed_demo_tenant(db, REPO / "examples")
    assert again.key != key
    store = open_store(db)
    try:
        keys = store.list_api_keys("demo")
    finally:
        store.close()
    assert len(keys) == 2
    assert len([k for k in keys if k.revoked_at is None]) == 1


@contextmanager
def _request_waiting_for_its_body(url: str, path: str, key: str, body: bytes) -> Iterator[socket.socket]:
    """A POST of ``body`` whose headers the server has parsed and whose body it waits for: the socket, once the
    server has answered ``100 Continue``."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nExpect: 100-continue\r\n"
            "Connection: close\r\n\r\n"
        )
        sock.sendall(head.encode())
        interim = b""
        while b"\r\n\r\n" not in interim:
            chunk = sock.recv(4096)
            assert chunk, f"the server closed the connection before 100 Continue: {interim!r}"
            interim += chunk
        assert interim.startswith(b"HTTP/1.1 100 "), interim[:200]
        yield sock


def _read_to_close(sock: socket.socket) -> bytes:
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def _wait_for_log(log: Path, text: str, *, count: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while log.read_text(encoding="utf-8").count(text) < count:
        assert time.monotonic() < deadline, f"{text!r} not logged {count} times in {timeout} s"
        time.sleep(0.1)


def _read_json_banner(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    text = ""
    while True:
        line = proc.stdout.readline()
        if not line:
            break
        text += line
        if line.startswith("}"):
            return text
    raise AssertionError(f"no banner: {text!r}")


def test_starts_and_reports_not_ready_while_the_store_is_down() -> None:
    app = create_app(make_settings(db_url="postgresql://nobody@127.0.0.1:1/none?connect_timeout=1"))
    with serve_app(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/v1/health").status_code == 200
        ready = http.get("/v1/ready")
        assert ready.status_code == 503
        assert ready.json()["checks"]["embedder"] == "ok"
        assert http.get("/v1/tenants/acme/rules", headers=bearer(ADMIN_KEY)).status_code == 503
