"""The transport over a real loopback server (uvicorn with the protocol ``norma serve`` runs), driven by raw sockets:
head size caps (431), head and body deadlines (408), the key checked before the body (401 without reading it), a cap
on open connections (503), malformed requests (400), every refusal a JSON problem; no redirects (item 5); failed
authentications limited per address and per key id (item 6). Issue 23, items 1, 5 and 6."""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from norma.service import create_app, http_protocol
from norma.service._protocol import BODY_GRACE_SECONDS
from norma.store import RuleStore
from tests.service._server import serve_app
from tests.service.conftest import ADMIN_KEY, bearer, make_settings

HEADER_TIMEOUT = 0.6
BODY_TIMEOUT = 0.6
MAX_HEADER = 1024
MAX_HEAD = 4096


@dataclass
class Answer:
    """What came back on a raw connection: the status, headers (lower-case names), body, and when it ended."""

    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float
    closed: bool
    raw: bytes = field(repr=False, default=b"")

    def problem(self) -> dict[str, Any]:
        assert self.headers["content-type"] == "application/problem+json", self.headers
        data = json.loads(self.body)
        assert isinstance(data, dict)
        assert data["status"] == self.status
        assert data["type"].startswith("urn:norma:problem:")
        assert data["title"]
        assert data["detail"]
        return data


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


def _read_answer(sock: socket.socket, started: float, timeout: float) -> Answer | None:
    """One response from ``sock`` (None if nothing came within ``timeout``)."""
    sock.settimeout(timeout)
    data = b""
    closed = False
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                closed = True
                break
            data += chunk
    except TimeoutError:
        pass
    except ConnectionResetError:
        closed = True
    if b"\r\n\r\n" not in data:
        return None
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    try:
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                closed = True
                break
            rest += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    seconds = time.monotonic() - started
    if not closed and headers.get("connection") == "close":
        with contextlib.suppress(TimeoutError, ConnectionResetError):
            closed = sock.recv(1) == b""
    return Answer(int(lines[0].split()[1]), headers, rest[:length], seconds, closed, data)


def exchange(url: str, data: bytes, *, timeout: float = 5.0) -> Answer | None:
    """Send ``data`` on a new connection and read one response (None when none came within ``timeout``)."""
    with socket.create_connection(_address(url)) as sock:
        started = time.monotonic()
        sock.sendall(data)
        return _read_answer(sock, started, timeout)


def _request(method: str, path: str, *headers: str, body: bytes = b"", host: str = "127.0.0.1") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@pytest.fixture(scope="module")
def server(store: RuleStore) -> Iterator[str]:
    settings = make_settings(
        header_timeout=HEADER_TIMEOUT,
        body_timeout=BODY_TIMEOUT,
        max_header_bytes=MAX_HEADER,
        max_head_bytes=MAX_HEAD,
        auth_failure_rate=0,  # the failure limit has its own server below
    )
    with serve_app(create_app(settings, store=store), http=http_protocol(settings)) as url:
        yield url


# item 1: the request head


def test_a_header_over_the_cap_is_431_with_a_problem_naming_it(server: str) -> None:
    answer = exchange(server, _request("GET", "/v1/health", "Authorization: Bearer " + "k" * (2 * MAX_HEADER)))
    assert answer is not None
    assert answer.status == 431
    problem = answer.problem()
    assert problem["field"] == "headers.authorization"
    assert f"{MAX_HEADER:,} bytes" in problem["detail"]
    assert answer.headers["connection"] == "close"
    assert answer.closed
    assert answer.headers["x-content-type-options"] == "nosniff"
    small = exchange(server, _request("GET", "/v1/health", "Authorization: Bearer " + "k" * (MAX_HEADER // 2)))
    assert small is not None
    assert small.status == 200


def test_a_head_over_the_total_cap_is_431_before_it_ends(server: str) -> None:
    """Many headers, each under its cap, never finished: answered once the cap is reached, not after the head."""
    unfinished = _request("GET", "/v1/health")[:-2] + b"X-Filler: abcdefghijklmnopqrstuvwxyz\r\n" * 200
    answer = exchange(server, unfinished, timeout=HEADER_TIMEOUT / 2)  # well before the header deadline
    assert answer is not None, "no answer: the server is still buffering the head"
    assert answer.status == 431
    assert answer.problem()["field"] == "headers"
    assert answer.closed


def test_a_giant_header_is_cut_off_early(server: str) -> None:
    """64 MiB of one header: the server answers 431 and closes long before the client could send it all."""
    with socket.create_connection(_address(server)) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ")
        sent = 0
        stop = threading.Event()

        def flood() -> None:
            nonlocal sent
            piece = b"a" * 65536
            with contextlib.suppress(OSError):
                while sent < 64 * 1024 * 1024 and not stop.is_set():
                    sock.sendall(piece)
                    sent += len(piece)

        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        answer = _read_answer(sock, started, timeout=5)
        stop.set()
        writer.join(timeout=10)
    assert answer is not None
    assert answer.status == 431
    assert answer.seconds < 2


def test_an_unfinished_head_is_408_at_the_header_timeout(server: str) -> None:
    answer = exchange(server, b"GET /v1/health HTTP/1.1\r\nHost: x\r\n", timeout=5)
    assert answer is not None, "no answer: the head is never timed out"
    assert answer.status == 408
    assert answer.problem()["field"] == "headers"
    assert HEADER_TIMEOUT * 0.8 <= answer.seconds < HEADER_TIMEOUT + 1.5
    assert answer.closed


def test_a_trickling_head_is_cut_at_the_header_timeout(server: str) -> None:
    """One byte every 50 ms keeps a plain keep-alive timer from ever firing; the head's deadline still does."""
    request = _request("GET", "/v1/health", *(f"X-Slow-{i}: {i}" for i in range(50)))
    with socket.create_connection(_address(server)) as sock:
        started = time.monotonic()
        stop = threading.Event()

        def trickle() -> None:
            with contextlib.suppress(OSError):
                for byte in request[:-4]:
                    if stop.wait(0.05):
                        return
                    sock.sendall(bytes([byte]))

        writer = threading.Thread(target=trickle, daemon=True)
        writer.start()
        answer = _read_answer(sock, started, timeout=HEADER_TIMEOUT + 3)
        stop.set()
        writer.join(timeout=5)
    assert answer is not None, "the trickling connection was never cut"
    assert answer.status == 408
    assert answer.seconds < HEADER_TIMEOUT + 1.5


def test_a_connection_that_sends_nothing_is_closed_at_the_header_timeout(server: str) -> None:
    with socket.create_connection(_address(server)) as sock:
        started = time.monotonic()
        sock.settimeout(5)
        assert sock.recv(1024) == b""
        assert time.monotonic() - started < HEADER_TIMEOUT + 1.5


def test_a_kept_alive_connection_trickling_its_next_head_is_cut(server: str) -> None:
    with socket.create_connection(_address(server)) as sock:
        started = time.monotonic()
        sock.sendall(_request("GET", "/v1/health"))
        first = _read_answer(sock, started, timeout=5)
        assert first is not None
        assert first.status == 200
        started = time.monotonic()
        sock.sendall(b"GET /v1/health HTTP/1.1\r\n")
        second = _read_answer(sock, started, timeout=5)
    assert second is not None
    assert second.status == 408
    assert second.seconds < HEADER_TIMEOUT + 1.5


def test_a_malformed_request_is_a_400_problem(server: str) -> None:
    answer = exchange(server, b"NOT HTTP AT ALL\x00\r\n\r\n")
    assert answer is not None
    assert answer.status == 400
    answer.problem()
    assert answer.closed


# item 1: the key before the body, and the body's deadline

KEYED = [
    ("POST", "/v1/tenants/acme/rules"),
    ("PUT", "/v1/tenants/acme/rules/r1"),
    ("POST", "/v1/tenants/acme/match"),
    ("POST", "/v1/audit"),
    ("POST", "/v1/rubrics/evaluate"),
    ("POST", "/v1/names/generate"),
    ("POST", "/v1/tenants/acme/keys"),
]


@pytest.mark.parametrize(("method", "path"), KEYED)
def test_a_bad_key_is_401_before_the_body_is_read(server: str, method: str, path: str) -> None:
    """``Content-Length: 1000`` with 10 bytes sent and a bogus key: 401 at once, the connection closed."""
    request = _request(method, path, "Authorization: Bearer bogus", "Content-Length: 1000", body=b"0123456789")
    answer = exchange(server, request, timeout=BODY_TIMEOUT / 2)  # before the body deadline could answer
    assert answer is not None, "no answer: the server waits for the body before checking the key"
    assert answer.status == 401
    assert answer.problem()["detail"] == "the API key is not valid"
    assert answer.headers["connection"] == "close"
    assert answer.closed
    missing = exchange(server, _request(method, path, "Transfer-Encoding: chunked", body=b"5\r\nhello\r\n"))
    assert missing is not None
    assert missing.status == 401
    assert missing.seconds < BODY_TIMEOUT


def test_every_route_that_needs_a_key_checks_it_before_the_body(server: str, store: RuleStore) -> None:
    """Read from the OpenAPI schema: every route but the probes answers 401 to a bogus key, its body pending."""
    paths: dict[str, dict[str, Any]] = create_app(make_settings(), store=store).openapi()["paths"]
    checked = 0
    for path, operations in paths.items():
        if path in ("/v1/health", "/v1/ready"):
            continue
        concrete = path.replace("{tenant}", "acme").replace("{rule_id}", "r1").replace("{key_id}", "k1")
        for method in sorted(operations):
            request = _request(
                method.upper(), concrete, "Authorization: Bearer bogus", "Content-Length: 500", body=b"{"
            )
            answer = exchange(server, request, timeout=BODY_TIMEOUT / 2)
            assert answer is not None, f"{method} {path}: no answer before the body"
            assert answer.status == 401, f"{method} {path}: {answer.status}"
            checked += 1
    assert checked >= 18


def test_a_body_announced_but_not_sent_is_408_at_the_body_timeout(server: str, acme_key: str) -> None:
    lie = _request(
        "POST", "/v1/tenants/acme/match", f"Authorization: Bearer {acme_key}", "Content-Length: 1000", body=b"{"
    )
    answer = exchange(server, lie)
    assert answer is not None, "no answer to a body that never ends"
    assert answer.status == 408
    assert answer.problem()["field"] == "body"
    assert BODY_TIMEOUT * 0.8 <= answer.seconds < BODY_TIMEOUT + 1.5
    assert answer.closed


def test_a_chunked_body_without_its_last_chunk_is_408(server: str, acme_key: str) -> None:
    unfinished = _request(
        "POST",
        "/v1/tenants/acme/match",
        f"Authorization: Bearer {acme_key}",
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
        body=b'5\r\n{"mes\r\n',
    )
    answer = exchange(server, unfinished)
    assert answer is not None
    assert answer.status == 408
    assert answer.seconds < BODY_TIMEOUT + 1.5


def test_a_chunked_body_with_giant_trailers_is_431(server: str, acme_key: str) -> None:
    head = _request(
        "POST",
        "/v1/names/query",
        f"Authorization: Bearer {acme_key}",
        "Content-Type: application/json",
        "Transfer-Encoding: chunked",
    )
    body = b"2\r\n{}\r\n0\r\nX-Trailer: " + b"t" * (4 * MAX_HEAD)
    answer = exchange(server, head + body, timeout=BODY_TIMEOUT / 2)
    assert answer is not None
    assert answer.status == 431
    assert answer.problem()["field"] == "trailers"


def test_complete_requests_still_work_on_kept_alive_connections(server: str, acme_key: str) -> None:
    with httpx.Client(base_url=server, timeout=10) as http:
        for _ in range(3):
            response = http.post("/v1/tenants/acme/match", json={"message": "I lost my card"}, headers=bearer(acme_key))
            assert response.status_code == 200
            assert response.json()["matches"]
        chunked = http.post(
            "/v1/tenants/acme/match",
            content=iter([b'{"message": ', b'"I lost my card"}']),
            headers={**bearer(acme_key), "content-type": "application/json"},
        )
        assert chunked.status_code == 200


def test_connections_over_the_cap_are_503_at_once(store: RuleStore) -> None:
    settings = make_settings(max_connections=4, header_timeout=30)
    with serve_app(create_app(settings, store=store), http=http_protocol(settings)) as url:
        held = [socket.create_connection(_address(url)) for _ in range(4)]
        try:
            time.sleep(0.2)
            answer = exchange(url, _request("GET", "/v1/health"), timeout=2)
            assert answer is not None
            assert answer.status == 503
            assert "4 open connections" in answer.problem()["detail"]
            assert answer.seconds < 1
        finally:
            for sock in held:
                sock.close()
        time.sleep(0.3)
        again = exchange(url, _request("GET", "/v1/health"))
        assert again is not None
        assert again.status == 200


# item 5: no redirects


@pytest.mark.parametrize(
    "path", ["/v1/tenants/acme/rules/", "/v1/tenants/acme/", "/v1/health/", "/v1/tenants/acme/rules/refund/"]
)
def test_a_trailing_slash_is_404_never_a_redirect_to_the_host_header(server: str, acme_key: str, path: str) -> None:
    for headers in ((), (f"Authorization: Bearer {acme_key}",)):
        answer = exchange(server, _request("GET", path, *headers, host="evil.example"))
        assert answer is not None
        assert answer.status == 404, answer.raw[:200]
        assert "location" not in answer.headers
        assert b"evil.example" not in answer.raw
        answer.problem()


# item 6: failed authentications


@pytest.fixture(scope="module")
def capped(store: RuleStore) -> Iterator[str]:
    settings = make_settings(auth_failure_rate=0.2, auth_failure_burst=5)
    with serve_app(create_app(settings, store=store), http=http_protocol(settings)) as url:
        yield url


def _get(http: httpx.Client, key: str, client: str) -> httpx.Response:
    """A request from ``client`` (uvicorn takes the address from X-Forwarded-For when the peer is 127.0.0.1)."""
    return http.get("/v1/tenants/acme", headers={**bearer(key), "X-Forwarded-For": client})


def test_failed_authentications_are_429_per_client_address(capped: str, acme_key: str) -> None:
    with httpx.Client(base_url=capped, timeout=10) as http:
        statuses = [_get(http, f"wrong-{i}", "10.1.0.1").status_code for i in range(5)]
        assert statuses == [401] * 5
        limited = _get(http, "wrong-again", "10.1.0.1")
        assert limited.status_code == 429
        assert int(limited.headers["retry-after"]) >= 1
        assert limited.headers["content-type"] == "application/problem+json"
        assert "failed authentications" in limited.json()["detail"]
        # the address is stopped before its key is looked at, whatever the key
        assert _get(http, acme_key, "10.1.0.1").status_code == 429
        # other addresses are not affected
        assert _get(http, "wrong", "10.1.0.2").status_code == 401
        assert _get(http, acme_key, "10.1.0.3").status_code == 200
        # and many bad keys from one address are mostly 429 (the 3,000 bad keys, 0 answered 429)
        many = [_get(http, f"bad-{i}", "10.1.0.4").status_code for i in range(60)]
        assert many.count(401) == 5
        assert many.count(429) == 55


def test_failed_authentications_are_429_per_key_id(capped: str, acme_key: str, store: RuleStore) -> None:
    """Wrong secrets naming one key id from many addresses: 429 past the burst; the right secret still works."""
    key_id = acme_key.split("_")[1]
    with httpx.Client(base_url=capped, timeout=10) as http:
        wrong = f"nrm_{key_id}_{'x' * 43}"
        statuses = [_get(http, wrong, f"10.2.0.{i}").status_code for i in range(1, 9)]
        assert statuses == [401] * 5 + [429] * 3
        limited = _get(http, wrong, "10.2.1.1")
        assert limited.status_code == 429
        assert key_id in limited.json()["detail"]
        assert int(limited.headers["retry-after"]) >= 1
        assert _get(http, acme_key, "10.2.1.2").status_code == 200  # its owner is never locked out
        other = f"nrm_{'0' * 12}_{'x' * 43}"
        assert _get(http, other, "10.2.1.3").status_code == 401  # other key ids are not affected


def test_failed_authentications_are_limited_without_a_proxy_header(store: RuleStore) -> None:
    settings = make_settings(auth_failure_rate=0.5, auth_failure_burst=3)
    with (
        serve_app(create_app(settings, store=store), http=http_protocol(settings)) as url,
        httpx.Client(base_url=url, timeout=10) as http,
    ):
        statuses = [http.get("/v1/tenants/acme", headers=bearer(f"w{i}")).status_code for i in range(5)]
        assert statuses == [401, 401, 401, 429, 429]
        assert http.get("/v1/health").status_code == 200  # routes without a key are not limited
        assert http.get("/v1/tenants/acme", headers=bearer(ADMIN_KEY)).status_code == 429


# what create_app gives under any server


def test_the_app_alone_checks_the_key_first_and_times_the_body(store: RuleStore, acme_key: str) -> None:
    """Under plain uvicorn (no norma protocol): the key before the body, and the body's deadline, still hold."""
    settings = make_settings(body_timeout=BODY_TIMEOUT, auth_failure_rate=0)
    with serve_app(create_app(settings, store=store)) as url:
        lie = "Content-Length: 1000"
        bogus = exchange(url, _request("POST", "/v1/tenants/acme/match", "Authorization: Bearer x", lie, body=b"{"))
        assert bogus is not None
        assert bogus.status == 401
        assert bogus.seconds < BODY_TIMEOUT
        valid = exchange(url, _request("POST", "/v1/tenants/acme/match", f"Authorization: Bearer {acme_key}", lie))
        assert valid is not None
        assert valid.status == 408
        assert valid.closed


def test_the_protocol_factory_pickles_for_worker_processes() -> None:
    import pickle

    settings = make_settings(max_header_bytes=2048, header_timeout=3)
    factory = pickle.loads(pickle.dumps(http_protocol(settings)))
    assert factory.keywords["max_header_bytes"] == 2048
    assert factory.keywords["header_timeout"] == 3


async def _answers_without_reading(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An ASGI app that answers every request at once and never reads its body."""
    if scope["type"] == "lifespan":
        message = await receive()
        while message["type"] != "lifespan.shutdown":
            await send({"type": message["type"] + ".complete"})
            message = await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def test_a_body_nobody_reads_cannot_hold_the_connection() -> None:
    """The protocol's own body deadline, behind any app: a client trickling a body the app answered without reading
    is cut at ``body_timeout`` plus the grace, though every byte it sends cancels uvicorn's keep-alive timer."""
    settings = make_settings(body_timeout=BODY_TIMEOUT)
    with serve_app(_answers_without_reading, http=http_protocol(settings)) as url:
        with socket.create_connection(_address(url)) as sock:
            started = time.monotonic()
            sock.sendall(_request("POST", "/anything", "Content-Length: 100000", body=b"x"))
            answer = _read_answer(sock, started, timeout=5)
            assert answer is not None
            assert answer.status == 200
            closed_at = None
            while closed_at is None and time.monotonic() - started < BODY_TIMEOUT + 5:
                readable, _, _ = select.select([sock], [], [], 0.05)
                try:
                    if readable and not sock.recv(1024):
                        closed_at = time.monotonic()
                    sock.sendall(b"x")
                except OSError:
                    closed_at = time.monotonic()
        assert closed_at is not None, "the trickled body held the connection"
        assert closed_at - started < BODY_TIMEOUT + BODY_GRACE_SECONDS + 1.5


def test_pipelined_requests_are_all_answered(server: str, acme_key: str) -> None:
    """Several requests in one write (a body included): the head accounting restarts at each one."""
    body = b'{"rubric": {}}'
    one = _request("GET", "/v1/health")
    two = _request(
        "POST",
        "/v1/rubrics/validate",
        f"Authorization: Bearer {acme_key}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        body=body,
    )
    with socket.create_connection(_address(server)) as sock:
        burst = (one + two) * 2 + one * 150  # 6 KiB in one write, over the 4 KiB head cap, of small heads
        assert len(burst) > MAX_HEAD
        sock.sendall(burst)
        sock.settimeout(5)
        reader = sock.makefile("rb")
        statuses = []
        for _ in range(154):
            status = int(reader.readline().split()[1])
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            reader.read(length)
            statuses.append(status)
        reader.close()
    assert statuses == [200] * 154
