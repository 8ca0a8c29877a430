"""``norma mcp --transport streamable-http``: the same tools over HTTP on 127.0.0.1, through the SDK's client."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import yaml
from anyio.from_thread import start_blocking_portal
from mcp.client.streamable_http import streamable_http_client

from mcp import ClientSession
from tests.conftest import EXAMPLES, REPO
from tests.mcp._client import server_env

RULES = str(EXAMPLES / "rulebooks" / "banking-support.yaml")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port(port: int) -> list[str]:
    return ["--port", str(port), "--format", "json"]


def _wait_for(port: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port}")


def test_the_tools_over_streamable_http() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "norma", "mcp", "--rules", RULES, "--transport", "streamable-http", *_port(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**server_env(), "PATH": "/usr/bin:/bin"},
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        banner = json.loads(proc.stdout.readline())
        assert banner["url"] == f"http://127.0.0.1:{port}/mcp"
        _wait_for(port, proc)
        with (
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(streamable_http_client(banner["url"])) as (read, write),
            portal.wrap_async_context_manager(ClientSession(read, write)) as session,
        ):
            portal.call(session.initialize)
            names = {tool.name for tool in portal.call(session.list_tools).tools}
            assert "score_rubric" in names
            assert "list_rules" in names
            listed = portal.call(session.call_tool, "list_rules", {})
            assert not listed.is_error
            rules = yaml.safe_load((EXAMPLES / "rulebooks" / "banking-support.yaml").read_text(encoding="utf-8"))
            assert listed.structured_content["count"] == len(rules["rules"])
            refused = portal.call(session.call_tool, "list_rules", {"tenant": "acme"})
            assert refused.is_error
            assert refused.structured_content["error"] == "ConfigError"
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    assert code == 0
