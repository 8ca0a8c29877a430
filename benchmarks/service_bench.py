"""Match requests against a 1k-rule tenant served by ``norma serve`` (2 uvicorn workers), load from this process.

The script builds a SQLite store with ``--rules`` synthetic rules (one example each) in a temporary directory,
creates an API key, starts ``norma serve --workers 2 --rate-limit 0`` on a free loopback port, warms both workers
up, then sends ``POST /v1/tenants/bench/match`` requests from ``--concurrency`` concurrent connections (asyncio +
httpx, one process: this one) for ``--duration`` seconds. It reports requests/s, latency p50/p99 (client side,
loopback), errors (any non-200), and the resident memory (RSS) of the server's processes sampled every
``--sample`` seconds, to show whether memory stays flat. Bounded in time and count; the server is stopped with
SIGTERM at the end.

Usage::

    .venv/bin/python benchmarks/service_bench.py                    # 30 s
    .venv/bin/python benchmarks/service_bench.py --duration 300     # the 5-minute memory run of the issue
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
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


async def load(url: str, key: str, duration: float, concurrency: int, sample: float, pid: int) -> dict[str, object]:
    latencies: list[float] = []
    errors = 0
    empty = 0
    kinds: dict[str, int] = {}
    memory: list[tuple[float, int]] = []
    headers = {"Authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    started = time.perf_counter()
    stop = started + duration

    async def worker(client: httpx.AsyncClient, index: int) -> None:
        nonlocal errors, empty
        i = index
        while time.perf_counter() < stop:
            body = {"message": MESSAGES[i % len(MESSAGES)]}
            i += 1
            t0 = time.perf_counter()
            try:
                response = await client.post(f"{url}/v1/tenants/bench/match", json=body, headers=headers)
                status = response.status_code
                if status == 200 and not response.json()["matches"]:
                    empty += 1
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            latencies.append(time.perf_counter() - t0)
            if status != 200:
                errors += 1
                kinds[str(status)] = kinds.get(str(status), 0) + 1

    async def sampler() -> None:
        while time.perf_counter() < stop:
            memory.append((time.perf_counter() - started, rss_kib(pid)))
            await asyncio.sleep(sample)
        memory.append((time.perf_counter() - started, rss_kib(pid)))

    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        await asyncio.gather(sampler(), *(worker(client, i) for i in range(concurrency)))
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load (300 for the memory run)")
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between two RSS samples")
    args = parser.parse_args()

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
            result = asyncio.run(load(url, key, args.duration, args.concurrency, args.sample, server.pid))
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(
        f"service_bench: {args.rules} rules, {args.workers} workers, {args.concurrency} connections, "
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
