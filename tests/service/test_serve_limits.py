"""``norma serve`` itself (a subprocess, two workers) under the attacks of issue 23, item 1: the head caps and
deadlines reach every worker from the command line, and connections holding unfinished giant headers leave the
server's memory flat (before the fix, 8 x 8 MiB of one header grew it by more than the 64 MiB sent)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.service._server import serve_process, tree_rss
from tests.service.test_transport import _address, _read_answer, _request, exchange

pytestmark = pytest.mark.slow

MiB = 1024 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    folder = tmp_path_factory.mktemp("serve-limits")
    args = ["--workers", "2", "--db", f"sqlite:///{folder / 'norma.db'}", "--log-level", "warning"]
    args += ["--header-timeout", "1", "--max-header-bytes", "1024", "--max-head-bytes", "4096"]
    with serve_process(args, log=folder / "serve.log") as (url, proc):
        yield url, proc.pid


def test_every_worker_caps_the_head(served: tuple[str, int]) -> None:
    url, _ = served
    for _ in range(6):  # new connections, spread over both workers (one SO_REUSEPORT socket each)
        answer = exchange(url, _request("GET", "/v1/health", "X-Big: " + "b" * 2000))
        assert answer is not None
        assert answer.status == 431
        slow = exchange(url, b"GET /v1/health HTTP/1.1\r\n")
        assert slow is not None
        assert slow.status == 408
        assert slow.seconds < 2.5


def test_unfinished_giant_headers_leave_memory_flat(served: tuple[str, int]) -> None:
    url, pid = served
    before = tree_rss(pid)
    sockets: list[socket.socket] = []
    answers = []

    def flood() -> None:
        sock = socket.create_connection(_address(url))
        sockets.append(sock)
        started = time.monotonic()
        with contextlib.suppress(OSError):
            sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ")
            piece = b"a" * 65536
            for _ in range(8 * MiB // len(piece)):  # never ends the header
                sock.sendall(piece)
        answers.append(_read_answer(sock, started, timeout=3))

    threads = [threading.Thread(target=flood) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    during = tree_rss(pid)
    for sock in sockets:
        sock.close()
    assert during - before < 32 * MiB, f"the server grew by {(during - before) / MiB:.0f} MiB"
    assert [a.status if a else None for a in answers] == [431] * 8
