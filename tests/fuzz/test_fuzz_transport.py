"""Fuzzing the transport: raw bytes and near-valid HTTP/1.1 requests sent over a socket to a real loopback server
running ``norma serve``'s protocol (small head caps and deadlines), issue 23, item 1.

Requests are built from parts that are often wrong: odd methods and paths (trailing slashes, ``%00``, ``..``),
headers of every size around the caps (and a few over them), ``Content-Length`` that lies, chunked bodies with bad
framing, trailers or no last chunk, a missing, bogus or valid key, and bytes that are not HTTP at all. Property:
every request is answered within the deadlines (never left hanging), never with a 5xx, every error is a JSON
problem, and the server still answers its health probe afterwards.

``make test`` runs a small deterministic sample; ``make fuzz`` runs ``NORMA_FUZZ_EXAMPLES`` inputs per test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.service import PROBLEM_MEDIA_TYPE, create_app, http_protocol
from norma.store import open_store
from tests.fuzz._strategies import FUZZ
from tests.service._server import serve_app
from tests.service.conftest import ADMIN_KEY, make_settings
from tests.service.test_transport import exchange

DEADLINE = 0.4
MAX_HEADER = 512
MAX_HEAD = 2048

_METHODS = st.sampled_from(
    ["GET", "POST", "POST", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "BREW", "G\x00T"]
)
_PATHS = st.sampled_from(
    [
        "/v1/health",
        "/v1/health/",
        "/v1/tenants/acme",
        "/v1/tenants/acme/",
        "/v1/tenants/acme/rules",
        "/v1/tenants/acme/rules/",
        "/v1/tenants/acme/rules/r%00",
        "/v1/tenants/acme/rules/../../keys",
        "/v1/tenants/acme/match",
        "/v1/rubrics/validate",
        "/v1/names/query",
        "/docs",
        "/redoc",
        "/docs/assets/../../etc/passwd",
        "//evil.example/",
        "*",
        "http://evil.example/v1/health",
        "/" + "a" * 3000,
    ]
)
_KEYS = st.sampled_from([None, "bogus", f"Bearer {ADMIN_KEY}", "Bearer nrm_0123456789ab_x", "Basic Zm9vOmJhcg=="])
_HEADER_NAMES = st.sampled_from(["X-A", "Accept", "Cookie", "Content-Type", "Expect", "Via", "X-" + "n" * 600])
_HEADER_VALUES = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=255), max_size=40),
    st.sampled_from(["application/json", "100-continue", "\x7f", "a\rb"]),
    st.sampled_from([400, 490, 500, 511, 600, 3000]).map(lambda n: "v" * n),
)
_BODIES = st.one_of(
    st.just(b""),
    st.binary(max_size=200),
    st.sampled_from([b"{}", b'{"message": "I lost my card"}', b'{"rubric": {}}', b'{"name": "John"}', b"[1, 2"]),
)


@st.composite
def requests(draw: st.DrawFn) -> bytes:
    method = draw(_METHODS)
    path = draw(_PATHS)
    lines = [f"{method} {path} HTTP/1.1", "Host: " + draw(st.sampled_from(["127.0.0.1", "evil.example", ""]))]
    key = draw(_KEYS)
    if key is not None:
        lines.append(f"Authorization: {key}")
    for name, value in draw(st.lists(st.tuples(_HEADER_NAMES, _HEADER_VALUES), max_size=6)):
        lines.append(f"{name}: {value}")
    body = draw(_BODIES)
    framing = draw(st.sampled_from(["length", "length", "length", "none", "lie", "short", "chunked", "chunked-bad"]))
    if framing == "length":
        lines.append(f"Content-Length: {len(body)}")
    elif framing == "lie":  # announces more than is sent: the body deadline answers
        lines.append(f"Content-Length: {len(body) + 100}")
    elif framing == "short":  # announces less: the rest is a pipelined (bad) request
        lines.append(f"Content-Length: {len(body) // 2}")
    elif framing == "chunked":
        lines.append("Transfer-Encoding: chunked")
        body = (b"%x\r\n%s\r\n" % (len(body), body) if body else b"") + b"0\r\n\r\n"
    elif framing == "chunked-bad":
        lines.append("Transfer-Encoding: chunked")
        body = draw(st.sampled_from([b"zz\r\n", b"5\r\nabc", b"1\r\na\r\n0\r\nX-T: " + b"t" * 4000, b"0\r\n"]))
    head = "\r\n".join(lines).encode("latin-1", errors="replace") + b"\r\n\r\n"
    return head + body


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('fuzz-transport') / 'norma.db'}")
    settings = make_settings(
        header_timeout=DEADLINE, body_timeout=DEADLINE, max_header_bytes=MAX_HEADER, max_head_bytes=MAX_HEAD
    )
    try:
        with serve_app(create_app(settings, store=store), http=http_protocol(settings)) as url:
            yield url
    finally:
        store.close()


def _check(url: str, data: bytes) -> None:
    answer = exchange(url, data, timeout=DEADLINE + 3)
    assert answer is not None, f"no answer to {data[:120]!r}"
    assert answer.status < 500, (answer.status, data[:200], answer.body[:200])
    if answer.status >= 400 and answer.body:
        assert answer.headers["content-type"] == PROBLEM_MEDIA_TYPE, (data[:200], answer.headers)
        problem = json.loads(answer.body)
        assert problem["status"] == answer.status


@FUZZ
@given(data=requests())
def test_near_valid_requests(server: str, data: bytes) -> None:
    _check(server, data)


@FUZZ
@given(data=st.binary(min_size=1, max_size=3000).map(lambda b: b + b"\r\n\r\n"))
def test_arbitrary_bytes(server: str, data: bytes) -> None:
    _check(server, data)


def test_the_server_still_answers_after_the_fuzzing(server: str) -> None:
    assert httpx.get(f"{server}/v1/health", timeout=10).status_code == 200
