"""Match requests against a 1k-rule tenant served by ``norma serve`` (2 uvicorn workers), load from this process.

The script builds a SQLite store with ``--rules`` synthetic rules (one example each) in a temporary directory,
creates an API key, starts ``norma serve --workers 2 --rate-limit 0`` on a free loopback port, warms both workers
up, then sends ``POST /v1/tenants/bench/match`` requests from ``--concurrency`` keep-alive connections (raw
HTTP/1.1 over asyncio streams, requests prepared in advance: this process, a second one, costing the cores little)
for ``--duration`` seconds. It reports requests/s, latency p50/p99 (client side,
loopback), errors (any non-200), and the resident memory (RSS) of the server's processes sampled every
``--sample`` seconds, to show whether memory stays flat. Bounded in time and count; the server is stopped with
SIGTERM at the end.

Usage::

    .venv/bin/python benchmarks/service_bench.py                    # 30 s
    .venv/bin/python benchmarks/service_bench.py --duration 300     # the 5-minute memory run of the issue
    .venv/bin/python benchmarks/service_bench.py --int8             # int8 embeddings (NORMA_EMBEDDINGS_INT8=1)
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from norma.embeddings import INT8_ENV
from norma.matching import Rule
from norma.store import open_store

TOPICS = [
    ("refund", "customer asks for a refund of {x}", "explain the refund policy for {x}"),
    ("lost", "customer lost their {x}", "start the lost {x} flow"),
    ("price", "customer asks how much {x} costs", "give the current price list for {x}"),
    ("cancel", "customer wants to cancel their {x}", "explain how to cancel {x} and any fees"),
    ("broken", "customer says their {x} is broken", "open a repair ticket for the {x}"),
    ("late", "customer complains that the {x} is late", "apologise and give the {x} tracking status"),
    ("upgrade", "customer wants to upgrade their {x}", "offer the upgrade options for {x}"),
    ("password", "customer cannot log in to their {x} account", "send a password reset link for {x}"),
]
THINGS = [
    "card",
    "phone",
    "laptop",
    "subscription",
    "order",
    "parcel",
    "insurance",
    "loan",
    "mortgage",
    "ticket",
    "booking",
    "membership",
    "router",
    "television",
    "car",
    "bicycle",
    "sofa",
    "fridge",
    "washing machine",
    "printer",
    "camera",
    "watch",
    "headphones",
    "tablet",
    "gift card",
    "voucher",
    "savings account",
    "pension",
    "flight",
    "hotel room",
    "rental car",
    "train pass",
    "gym plan",
    "streaming plan",
    "mobile plan",
    "broadband",
    "electricity contract",
    "gas contract",
    "water bill",
    "parking permit",
    "credit line",
    "debit card",
    "travel insurance",
    "pet insurance",
    "home insurance",
    "software licence",
    "domain name",
    "cloud storage",
    "game console",
    "smart speaker",
    "e-reader",
    "coffee machine",
    "vacuum cleaner",
    "lawn mower",
    "boiler",
    "air conditioner",
    "dishwasher",
    "oven",
    "microwave",
    "blender",
    "kettle",
    "toaster",
    "mattress",
    "desk",
    "chair",
    "lamp",
    "curtains",
    "carpet",
    "paint",
    "tiles",
    "roof repair",
    "window",
    "door lock",
    "alarm system",
    "solar panel",
    "heat pump",
    "electric bike",
    "scooter",
    "tyres",
    "car service",
    "driving lessons",
    "course",
    "exam",
    "textbook",
    "concert ticket",
    "museum pass",
    "theatre ticket",
    "cinema ticket",
    "wedding package",
    "photo shoot",
    "haircut",
    "massage",
    "dentist appointment",
    "doctor appointment",
    "prescription",
    "glasses",
    "contact lenses",
    "hearing aid",
    "vitamins",
    "protein powder",
    "running shoes",
    "jacket",
    "backpack",
    "suitcase",
    "umbrella",
    "tent",
    "sleeping bag",
    "kayak",
    "ski pass",
    "snowboard",
    "golf clubs",
    "tennis racket",
    "football",
    "yoga mat",
    "dumbbells",
    "treadmill",
    "smartwatch",
    "drone",
    "3d printer",
    "keyboard",
    "mouse",
    "monitor",
    "graphics card",
    "hard drive",
    "memory card",
    "usb cable",
    "charger",
    "power bank",
    "phone case",
]
MESSAGES = [
    "I want my money back for the laptop",
    "my phone is broken, the screen does not turn on",
    "how much does the mobile plan cost per month?",
    "I lost my debit card yesterday",
    "please cancel my gym plan",
    "the parcel is three days late",
    "I can't log in to my cloud storage account",
    "can I upgrade my broadband to the faster one?",
    "the fridge stopped working",
    "refund the concert ticket please",
    "where is my order? it's late",
    "I forgot the password of my streaming plan",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def synthetic_rules(count: int, seed: int = 20261122) -> list[Rule]:
    rng = random.Random(seed)
    rules = []
    for i in range(count):
        name, condition, action = TOPICS[i % len(TOPICS)]
        thing = THINGS[(i // len(TOPICS)) % len(THINGS)]
        rules.append(
            Rule(
                id=f"{name}-{i:05d}",
                tenant_id="bench",
                condition_text=condition.format(x=thing),
                action_text=action.format(x=thing),
                priority=rng.randint(0, 100),
                examples=(f"{name} {thing} please",),
            )
        )
    return rules


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants, in KiB (from /proc)."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as children:
                    pending.extend(int(c) for c in children.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def request_bytes(port: int, key: str, message: str) -> bytes:
    """One keep-alive ``POST .../match`` as raw HTTP/1.1 bytes (prepared before the clock starts)."""
    body = json.dumps({"message": message}).encode("utf-8")
    head = (
        f"POST /v1/tenants/bench/match HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """Status and body of one HTTP/1.1 response with a Content-Length (what uvicorn sends for JSON)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def load(
    port: int, key: str, messages: list[str], duration: float, concurrency: int, sample: float, pid: int
) -> dict[str, object]:
    """``concurrency`` keep-alive connections, each sending the next request as soon as the answer is in.

    The client speaks raw HTTP/1.1 over asyncio streams with the requests prepared in advance, so it costs a few
    tens of microseconds per request and leaves the cores to the server (an httpx client costs ~1 ms each).
    """
    prepared = [request_bytes(port, key, m) for m in messages]
    latencies: list[float] = []
    errors = 0
    empty = 0
    kinds: dict[str, int] = {}
    memory: list[tuple[float, int]] = []
    started = time.perf_counter()
    stop = started + duration
    counter = iter(range(10**12))

    async def worker() -> None:
        nonlocal errors, empty
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while time.perf_counter() < stop:
                payload = prepared[next(counter) % len(prepared)]
                t0 = time.perf_counter()
                try:
                    writer.write(payload)
                    status, body = await read_response(reader)
                    if status == 200 and b'"matches":[]' in body:
                        empty += 1
                except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                    status = 0
                    kinds[type(exc).__name__] = kinds.get(type(exc).__name__, 0) + 1
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                latencies.append(time.perf_counter() - t0)
                if status != 200:
                    errors += 1
                    if status:
                        kinds[str(status)] = kinds.get(str(status), 0) + 1
        finally:
            writer.close()

    async def sampler() -> None:
        while time.perf_counter() < stop:
            memory.append((time.perf_counter() - started, rss_kib(pid)))
            await asyncio.sleep(sample)
        memory.append((time.perf_counter() - started, rss_kib(pid)))

    await asyncio.gather(sampler(), *(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "requests": len(latencies),
        "elapsed": elapsed,
        "rps": len(latencies) / elapsed,
        "p50": statistics.median(latencies) * 1000,
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "errors": errors,
        "error_kinds": kinds,
        "empty": empty,
        "memory": memory,
    }


ASKS = [
    "I want a refund for my {x}",
    "I think I lost my {x}",
    "how much does the {x} cost?",
    "please cancel my {x}",
    "my {x} is broken and does not work",
    "my {x} still has not arrived, it is late",
    "can I upgrade my {x}?",
    "I cannot log in to my {x} account",
]


def varied_messages(seed: int = 7) -> list[str]:
    """Every ASKS sentence about every THING (800 distinct messages), shuffled: no text is sent twice until the list
    wraps, so nothing downstream can answer from a cache of recent messages."""
    out = [ask.format(x=thing) for thing in THINGS for ask in ASKS]
    random.Random(seed).shuffle(out)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load (300 for the memory run)")
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between two RSS samples")
    parser.add_argument(
        "--int8", action="store_true", help=f"int8 embeddings ({INT8_ENV}=1) in the store set-up and the server"
    )
    args = parser.parse_args()
    if args.int8:
        os.environ[INT8_ENV] = "1"  # inherited by `norma serve`

    with tempfile.TemporaryDirectory(prefix="norma-service-bench-") as tmp:
        db = f"sqlite:///{Path(tmp) / 'norma.db'}"
        t0 = time.perf_counter()
        store = open_store(db)
        store.upsert_rules("bench", synthetic_rules(args.rules))
        key = store.create_api_key("bench", name="bench")
        store.close()
        setup = time.perf_counter() - t0
        port = free_port()
        norma = str(Path(sys.executable).parent / "norma")
        command = [norma, "serve", "--port", str(port), "--workers", str(args.workers), "--db", db]
        command += ["--rate-limit", "0", "--log-level", "warning"]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=tmp)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{url}/v1/ready", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.2)
            with httpx.Client(timeout=60) as client:  # each worker builds the tenant's matcher on its first match
                for message in MESSAGES * 2:
                    client.post(
                        f"{url}/v1/tenants/bench/match",
                        json={"message": message},
                        headers={"Authorization": f"Bearer {key}"},
                    )
            messages = varied_messages()
            result = asyncio.run(load(port, key, messages, args.duration, args.concurrency, args.sample, server.pid))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"service_bench: {args.rules} rules, {args.workers} workers, {args.concurrency} connections, "
        f"{'int8' if args.int8 else 'fp32'} embeddings, "
        f"{args.duration:g} s; {when}; {os.cpu_count()} cores; Python {platform.python_version()}; "
        f"store set-up {setup:.1f} s; load average at the end {os.getloadavg()[0]:.1f}"
    )
    print()
    print("| requests | requests/s | p50 ms | p99 ms | errors | answers without a match |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {result['requests']:,} | {result['rps']:.0f} | {result['p50']:.1f} | {result['p99']:.1f} | "
        f"{result['errors']} {result['error_kinds'] or ''} | {result['empty']} |"
    )
    print()
    memory = result["memory"]
    assert isinstance(memory, list)
    print("| t (s) | server RSS (MiB, all processes) |")
    print("|---:|---:|")
    for at, kib in memory:
        print(f"| {at:.0f} | {kib / 1024:.1f} |")
    first, last = memory[1][1] if len(memory) > 1 else memory[0][1], memory[-1][1]
    print()
    print(f"RSS change from the first sample after warm-up to the last: {(last - first) / 1024:+.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
