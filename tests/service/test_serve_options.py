"""`norma serve` options over a real socket: --int8, and a port that is already taken (one socket per worker)."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import httpx

from norma.embeddings import get_embedder
from norma.store import open_store
from tests.service._server import NORMA, serve_process
from tests.service.conftest import bearer
from tests.service.test_socket import _read_json_banner

REPO = Path(__file__).resolve().parents[2]


def test_int8_serves_matches_with_the_int8_model(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    args = ["--demo", "--int8", "--db", db, "--format", "json"]
    with serve_process(args, log=tmp_path / "serve.log", cwd=REPO) as (url, proc):
        banner = json.loads(_read_json_banner(proc))
        key = banner["demo"]["key"]
        answer = httpx.post(
            f"{url}/v1/tenants/demo/match",
            json={"message": "someone used my card without asking"},
            headers=bearer(key),
            timeout=60,
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["matches"][0]["rule"]["id"] == "fraud-suspected"
    int8_model = get_embedder(quantize=True).model_id
    assert int8_model.endswith("#int8.2")  # int8, encoder version 2: every text embedded alone
    store = open_store(db)
    try:
        _, rules, vectors = store.snapshot("demo", int8_model)
    finally:
        store.close()
    assert len(vectors) == len(rules) > 10  # the service embedded every rule with the int8 model, and kept them


def test_a_taken_port_is_a_clear_error_with_several_workers(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [NORMA, "serve", "--port", str(port), "--workers", "2", "--db", f"sqlite:///{tmp_path / 'n.db'}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 2
    assert f"could not start on 127.0.0.1:{port}" in result.stderr


def test_a_plain_serve_says_a_key_is_needed_and_how_to_create_one(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    with serve_process(["--db", db, "--format", "json"], log=tmp_path / "serve.log", cwd=tmp_path) as (url, proc):
        banner = json.loads(_read_json_banner(proc))
        assert banner["keys"] == (
            f"requests need an API key: create one with `norma keys create --tenant TENANT --db {db}`"
            " (or set NORMA_ADMIN_KEY before starting, for an admin key)"
        )
        assert httpx.get(f"{url}/v1/tenants/acme/rules", timeout=10).status_code == 401


def test_the_banner_names_the_guarded_endpoint_and_its_upstream(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    upstream = "http://127.0.0.1:9/v1/"  # nothing listens there: the banner is all this test reads
    args = ["--demo", "--db", db, "--upstream", upstream, "--guard-policy", "block"]
    with serve_process([*args, "--format", "json"], log=tmp_path / "serve.log", cwd=tmp_path) as (url, proc):
        guard = json.loads(_read_json_banner(proc))["guard"]
    assert guard == {
        "endpoint": f"{url}/v1/tenants/demo/chat/completions",
        "base_url": f"{url}/v1/tenants/demo",
        "upstream": "http://127.0.0.1:9/v1",
        "policy": "block",
    }
    with serve_process(args, log=tmp_path / "serve2.log", cwd=tmp_path) as (url, proc):
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(6)]  # the table banner: six lines with a demo and a guard
    assert lines[-1].strip() == (
        f"guarded endpoint: {url}/v1/tenants/demo/chat/completions -> http://127.0.0.1:9/v1/chat/completions "
        f"(policy block; an OpenAI client's base_url: {url}/v1/tenants/demo)"
    )
