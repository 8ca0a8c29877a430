"""Loading rubrics from URLs, against a real HTTP server on 127.0.0.1 (no mocks)."""

from __future__ import annotations

import inspect
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pydantic
import pytest

from norma.errors import RubricError
from norma.rubrics import fetch_rubric_text, load_rubric, parse_rubric_text

RUBRIC = {"version": "7", "goal_text": "From the web", "criteria": [{"id": "a", "description": "A", "weight": 3}]}
YAML_RUBRIC = "version: '8'\ncriteria:\n  - id: b\n    description: B\n"
BIG = b"{" + b" " * (1024 * 1024 + 10) + b"}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None, length: bool = True) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        routes = {
            "/rubric.json": lambda: self._send(200, json.dumps(RUBRIC).encode(), {"Content-Type": "application/json"}),
            "/rubric.yaml": lambda: self._send(200, YAML_RUBRIC.encode(), {"Content-Type": "text/yaml"}),
            "/list.json": lambda: self._send(200, b"[1, 2, 3]"),
            "/again": lambda: self._send(200, f"http://{self.headers['Host']}/rubric.json".encode()),
            "/missing": lambda: self._send(404, b"not here"),
            "/boom": lambda: self._send(500, b"oops"),
            "/big": lambda: self._send(200, BIG),
            "/big-unsized": lambda: self._send(200, BIG, {"Connection": "close"}, length=False),
            "/redirect": lambda: self._send(302, b"", {"Location": "/rubric.json"}),
            "/redirect-abs": lambda: self._send(301, b"", {"Location": f"http://{self.headers['Host']}/rubric.yaml"}),
            "/redirect-file": lambda: self._send(302, b"", {"Location": "file:///etc/passwd"}),
            "/redirect-ftp": lambda: self._send(307, b"", {"Location": "ftp://example.org/rubric.json"}),
            "/redirect-bare": lambda: self._send(302, b""),
            "/loop": lambda: self._send(302, b"", {"Location": "/loop"}),
        }
        if self.path == "/slow":
            time.sleep(1.5)
            self._send(200, json.dumps(RUBRIC).encode())
            return
        if self.path == "/trickle":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(40):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
            return
        routes.get(self.path, lambda: self._send(404, b""))()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the client hanging up on purpose (size cap, timeout) is expected here


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_json_url(base_url: str) -> None:
    rubric = load_rubric(f"{base_url}/rubric.json")
    assert rubric is not None
    assert (rubric.version, rubric.goal_text, rubric.criteria[0].weight) == ("7", "From the web", 3.0)


def test_yaml_url_and_surrounding_whitespace(base_url: str) -> None:
    rubric = load_rubric(f"  {base_url}/rubric.yaml\n")
    assert rubric is not None
    assert rubric.version == "8"
    assert rubric.criteria[0].id == "b"


def test_fetched_body_must_be_a_mapping(base_url: str) -> None:
    # as in synth-ai: a JSON body that is not an object reaches Rubric.model_validate
    with pytest.raises(pydantic.ValidationError, match="Input should be a valid dictionary or instance of Rubric"):
        load_rubric(f"{base_url}/list.json")
    with pytest.raises(RubricError, match="Rubric text must decode to a mapping") as caught:
        parse_rubric_text(f"{base_url}/list.json")
    assert f"{base_url}/list.json" in str(caught.value)


def test_a_fetched_url_is_not_fetched_again(base_url: str) -> None:
    with pytest.raises(RubricError, match="Rubric text must decode to a mapping"):
        load_rubric(f"{base_url}/again")


@pytest.mark.parametrize(("path", "status"), [("/missing", "HTTP 404 Not Found"), ("/boom", "HTTP 500")])
def test_http_error_status(base_url: str, path: str, status: str) -> None:
    with pytest.raises(RubricError, match=status) as caught:
        load_rubric(f"{base_url}{path}")
    assert f"{base_url}{path}" in str(caught.value)


@pytest.mark.parametrize("path", ["/big", "/big-unsized"])
def test_oversized_body(base_url: str, path: str) -> None:
    with pytest.raises(RubricError, match="over the limit of 1048576 bytes"):
        load_rubric(f"{base_url}{path}")
    with pytest.raises(RubricError, match="over the limit of 100 bytes"):
        fetch_rubric_text(f"{base_url}/rubric.json", max_bytes=100)


def test_larger_cap_accepts_big_body(base_url: str) -> None:
    text = fetch_rubric_text(f"{base_url}/big", max_bytes=2 * 1024 * 1024)
    assert len(text) == len(BIG)


@pytest.mark.parametrize("path", ["/redirect", "/redirect-abs"])
def test_http_redirects_are_followed(base_url: str, path: str) -> None:
    rubric = load_rubric(f"{base_url}{path}")
    assert rubric is not None
    assert rubric.version in {"7", "8"}


@pytest.mark.parametrize(("path", "target"), [("/redirect-file", "file:///etc/passwd"), ("/redirect-ftp", "ftp://")])
def test_redirect_to_another_scheme_is_refused(base_url: str, path: str, target: str) -> None:
    with pytest.raises(RubricError, match="only http and https redirects are followed") as caught:
        load_rubric(f"{base_url}{path}")
    assert target in str(caught.value)


def test_redirect_without_location(base_url: str) -> None:
    with pytest.raises(RubricError, match="redirect without a Location"):
        load_rubric(f"{base_url}/redirect-bare")


def test_redirect_loop_is_cut(base_url: str) -> None:
    with pytest.raises(RubricError, match="more than 5 redirects"):
        load_rubric(f"{base_url}/loop")
    with pytest.raises(RubricError, match="more than 0 redirects"):
        fetch_rubric_text(f"{base_url}/redirect", max_redirects=0)


def test_timeout(base_url: str) -> None:
    started = time.monotonic()
    with pytest.raises(RubricError, match=r"timed out after 0\.3 s"):
        load_rubric(f"{base_url}/slow", timeout=0.3)
    assert time.monotonic() - started < 1.2


def test_total_timeout_covers_a_trickling_body(base_url: str) -> None:
    started = time.monotonic()
    with pytest.raises(RubricError, match=r"timed out after 0\.5 s"):
        fetch_rubric_text(f"{base_url}/trickle", timeout=0.5)
    assert time.monotonic() - started < 1.5


def test_connection_refused_is_a_rubric_error() -> None:
    with pytest.raises(RubricError, match="could not fetch"):
        load_rubric("http://127.0.0.1:9/rubric.json", timeout=2)


@pytest.mark.parametrize("url", ["ftp://example.org/r.json", "file:///etc/passwd"])
def test_fetch_refuses_other_schemes(url: str) -> None:
    with pytest.raises(RubricError, match="unsupported URL scheme"):
        fetch_rubric_text(url)


def test_default_limits_are_the_documented_ones() -> None:
    load = inspect.signature(load_rubric).parameters
    fetch = inspect.signature(fetch_rubric_text).parameters
    assert load["timeout"].default == fetch["timeout"].default == 15.0
    assert load["max_bytes"].default == fetch["max_bytes"].default == 1024 * 1024
    assert fetch["max_redirects"].default == 5


def test_deny_private_refuses_loopback(base_url: str) -> None:
    with pytest.raises(RubricError, match=r"non-public address 127\.0\.0\.1"):
        load_rubric(f"{base_url}/rubric.json", deny_private=True)
    with pytest.raises(RubricError, match="non-public address"):
        load_rubric(base_url.replace("127.0.0.1", "localhost") + "/rubric.json", deny_private=True)


@pytest.mark.parametrize(
    "host", ["10.1.2.3", "192.168.0.1", "169.254.169.254", "[::1]", "[::ffff:127.0.0.1]", "0.0.0.0", "100.64.0.1"]
)
def test_deny_private_refuses_private_literals(host: str) -> None:
    with pytest.raises(RubricError, match="non-public address"):
        load_rubric(f"http://{host}/rubric.json", deny_private=True, timeout=1)


def test_deny_private_is_off_by_default_in_the_library(base_url: str) -> None:
    assert load_rubric(f"{base_url}/rubric.json") is not None
