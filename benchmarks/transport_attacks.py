"""The transport attacks of issue 23 (item 1) against ``norma serve`` on loopback: time to an answer and server memory.

The script builds a SQLite store with one tenant and a key in a temporary directory, starts ``norma serve`` (one
worker, every limit at its default) on a free port, and runs each attack from this process over raw sockets:

* ``giant-header``: one request whose ``Authorization`` header is 64 MiB (sent whole, then the request is ended);
* ``held-headers``: 8 connections each sending 64 MiB of one header and never ending it; the server's resident
  memory while they are held;
* ``trickle``: 300 connections each sending one header byte a second; how many are still open after ``--watch`` s;
* ``length-lie``: ``Content-Length: 1000``, 10 bytes sent, a bogus key; and the same with a valid key;
* ``chunked``: a chunked body without its last chunk, valid key.

It reports, per attack, the answer (status or "none") and when it came, and the server's RSS before and at its
peak (sampled every 50 ms from /proc). Every wait is bounded (``--patience`` s for an answer). Run it on a checkout
before the fix with ``PYTHONPATH=<that checkout>/src`` to compare.

Usage::

    .venv/bin/python benchmarks/transport_attacks.py                 # every attack
    .venv/bin/python benchmarks/transport_attacks.py --only trickle --watch 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for the tests' server helpers

from tests.service._server import free_port, stop_process, tree_rss

from norma.store import open_store

MiB = 1024 * 1024
ATTACKS = ("giant-header", "held-headers", "trickle", "length-lie", "chunked")


@contextlib.contextmanager
def peak_rss(pid: int) -> Iterator[dict[str, float]]:
    """Samples the server's RSS every 50 ms while the block runs: ``before``, ``peak`` and ``end`` in MiB."""
    result = {"before": tree_rss(pid) / MiB, "peak": 0.0, "end": 0.0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.05):
            result["peak"] = max(result["peak"], tree_rss(pid) / MiB)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield result
    finally:
        stop.set()
        sampler.join()
        result["end"] = tree_rss(pid) / MiB
        result["peak"] = max(result["peak"], result["end"], result["before"])


async def _answer(reader: asyncio.StreamReader, started: float, patience: float) -> tuple[str, float]:
    """The status line's code (or "closed" / "none") and the seconds it took."""
    try:
        line = await asyncio.wait_for(reader.readline(), timeout=max(0.1, patience - (time.monotonic() - started)))
    except TimeoutError:
        return "none", time.monotonic() - started
    except (ConnectionError, OSError):
        return "reset", time.monotonic() - started
    if not line:
        return "closed", time.monotonic() - started
    return line.decode("latin-1").split()[1], time.monotonic() - started


async def _send_header(port: int, size: int, *, finish: bool, patience: float) -> tuple[str, float]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    answer: asyncio.Task[tuple[str, float]] = asyncio.ensure_future(_answer(reader, started, patience))
    try:
        writer.write(b"GET /v1/tenants/t/rules HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ")
        piece = b"a" * 65536
        for _ in range(size // len(piece)):
            if answer.done():
                break
            writer.write(piece)
            await writer.drain()
        if finish and not answer.done():
            writer.write(b"\r\n\r\n")
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    result = await answer
    writer.close()
    return result


def giant_header(port: int, pid: int, key: str, args: argparse.Namespace) -> dict[str, Any]:
    with peak_rss(pid) as rss:
        status, seconds = asyncio.run(_send_header(port, 64 * MiB, finish=True, patience=args.patience))
    return {"answer": status, "seconds": seconds, **rss}


def held_headers(port: int, pid: int, key: str, args: argparse.Namespace) -> dict[str, Any]:
    async def run() -> list[tuple[str, float]]:
        tasks = [_send_header(port, 64 * MiB, finish=False, patience=args.patience) for _ in range(8)]
        return await asyncio.gather(*tasks)

    with peak_rss(pid) as rss:
        results = asyncio.run(run())
    statuses = sorted({s for s, _ in results})
    return {"answer": ",".join(statuses), "seconds": max(t for _, t in results), **rss}


def trickle(port: int, pid: int, key: str, args: argparse.Namespace) -> dict[str, Any]:
    async def one() -> str:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        request = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: %d\r\n" % (i, i) for i in range(500))
        status = "none"
        deadline = time.monotonic() + args.watch
        for byte in request:
            try:
                writer.write(bytes([byte]))
                await writer.drain()
                line = await asyncio.wait_for(reader.readline(), timeout=1.0)
                status = line.decode("latin-1").split()[1] if line else "closed"
                break
            except TimeoutError:
                pass
            except (ConnectionError, OSError):
                status = "reset"
                break
            if time.monotonic() > deadline:
                break
        writer.close()
        return status

    async def run() -> list[str]:
        return await asyncio.gather(*(one() for _ in range(300)))

    started = time.monotonic()
    with peak_rss(pid) as rss:
        statuses = asyncio.run(run())
    still_open = statuses.count("none")
    kinds = sorted(set(statuses))
    return {
        "answer": f"{still_open}/300 still open after {args.watch:g} s ({','.join(kinds)})",
        "seconds": time.monotonic() - started,
        **rss,
    }


def _raw(port: int, data: bytes, patience: float) -> tuple[str, float]:
    async def run() -> tuple[str, float]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        started = time.monotonic()
        writer.write(data)
        await writer.drain()
        result = await _answer(reader, started, patience)
        writer.close()
        return result

    return asyncio.run(run())


def length_lie(port: int, pid: int, key: str, args: argparse.Namespace) -> dict[str, Any]:
    def request(secret: str) -> bytes:
        return (
            b"POST /v1/tenants/t/match HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + secret.encode() + b"\r\nContent-Length: 1000\r\n\r\n0123456789"
        )

    with peak_rss(pid) as rss:
        bogus, bogus_s = _raw(port, request("bogus"), args.patience)
        valid, valid_s = _raw(port, request(key), args.patience)
    return {"answer": f"bogus key: {bogus} at {bogus_s:.2f} s; valid key: {valid}", "seconds": valid_s, **rss}


def chunked(port: int, pid: int, key: str, args: argparse.Namespace) -> dict[str, Any]:
    data = (
        b"POST /v1/tenants/t/match HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + key.encode() + b'\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mes\r\n'
    )
    with peak_rss(pid) as rss:
        status, seconds = _raw(port, data, args.patience)
    return {"answer": status, "seconds": seconds, **rss}


RUNNERS: dict[str, Callable[[int, int, str, argparse.Namespace], dict[str, Any]]] = {
    "giant-header": giant_header,
    "held-headers": held_headers,
    "trickle": trickle,
    "length-lie": length_lie,
    "chunked": chunked,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=ATTACKS, action="append", help="run this attack (repeatable)")
    parser.add_argument("--patience", type=float, default=45.0, help="seconds to wait for an answer")
    parser.add_argument("--watch", type=float, default=20.0, help="seconds the trickling connections keep trying")
    args = parser.parse_args()
    import norma

    source = Path(norma.__file__).parent
    rows: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="norma-attacks-") as tmp:
        db = f"sqlite:///{Path(tmp) / 'norma.db'}"
        store = open_store(db)
        key = store.create_api_key("t", name="attacks")
        store.close()
        port = free_port()
        norma_cli = str(Path(sys.executable).parent / "norma")
        command = [norma_cli, "serve", "--port", str(port), "--db", db, "--log-level", "warning"]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
        try:
            deadline = time.monotonic() + 60
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://127.0.0.1:{port}/v1/ready", timeout=2).status_code == 200:
                        break
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.2)
            for name in args.only or ATTACKS:
                rows.append((name, RUNNERS[name](port, server.pid, key, args)))
                time.sleep(3)  # let refused connections drain and close before the next attack
            alive = httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=10).status_code
        finally:
            stop_process(server, timeout=30)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"transport_attacks: norma from {source}; {when}; {os.cpu_count()} cores; Python "
        f"{platform.python_version()}; patience {args.patience:g} s; health after the attacks: {alive}"
    )
    print()
    print("| attack | answer | seconds | RSS before (MiB) | RSS peak (MiB) | RSS after (MiB) |")
    print("|---|---|---:|---:|---:|---:|")
    for name, row in rows:
        print(
            f"| {name} | {row['answer']} | {row['seconds']:.2f} | {row['before']:.0f} | {row['peak']:.0f} | "
            f"{row['end']:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
