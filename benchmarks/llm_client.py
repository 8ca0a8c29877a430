"""LLM client overhead: what norma.llm adds to a call, measured against the loopback fake server.

No model runs: the fake server (tests/_llm_server.py) answers at once, so the figures are the client's own cost
per call (prompt validation, a fresh connection and its TLS context lookup, JSON both ways, the retry plan) plus
the loopback HTTP round trip of Python's http.server. A real generation takes from 100 ms to seconds, so these
bound what norma adds on top of it.

* sync ``complete`` (Ollama and OpenAI-compatible), one call at a time;
* async ``acomplete``, one at a time and 10 at a time (``asyncio.gather``);
* a call whose first attempt gets a 503 (retry with a 1-5 ms backoff), to show the cost of one retry.

Run ``.venv/bin/python benchmarks/llm_client.py [--calls N]``; it prints a table (median and p95 in ms).
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests._llm_server import FakeLLMServer

from norma.llm import ChatClient, OllamaClient, OpenAIClient, RetryPolicy

FAST = RetryPolicy(max_retries=1, backoff_base=0.002, backoff_max=0.005)


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000


def _timed(call: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        call()
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per row (default 200)")
    args = parser.parse_args()
    n = args.calls
    rows: list[tuple[str, float, float]] = []
    with FakeLLMServer(default_reply="ok") as server:
        clients: dict[str, ChatClient] = {
            "ollama": OllamaClient(server.url, "m", retry=FAST),
            "openai": OpenAIClient(server.openai_url, "m", api_key="k", retry=FAST),
        }
        for client in clients.values():
            client.complete("warm up")
        for kind, client in clients.items():
            rows.append((f"sync complete, {kind}", *_stats(_timed(lambda c=client: c.complete("hi"), n))))

        ollama = clients["ollama"]

        async def sequential() -> list[float]:
            out = []
            for _ in range(n):
                started = time.perf_counter()
                await ollama.acomplete("hi")
                out.append(time.perf_counter() - started)
            return out

        rows.append(("async acomplete, one at a time", *_stats(asyncio.run(sequential()))))

        async def batches() -> list[float]:
            out = []
            for _ in range(max(1, n // 10)):
                started = time.perf_counter()
                await asyncio.gather(*(ollama.acomplete("hi") for _ in range(10)))
                out.append((time.perf_counter() - started) / 10)
            return out

        rows.append(("async acomplete, 10 concurrent (per call)", *_stats(asyncio.run(batches()))))

        def with_retry() -> None:
            server.error(503)
            ollama.complete("hi")

        rows.append(("sync complete, first attempt 503 + retry", *_stats(_timed(with_retry, max(1, n // 4)))))

    print(f"norma.llm client overhead vs loopback fake server; {n} calls/row; Python {platform.python_version()}")
    print(f"{'workload':<45} {'median ms':>10} {'p95 ms':>10}")
    for name, median, p95 in rows:
        print(f"{name:<45} {median:>10.2f} {p95:>10.2f}")


if __name__ == "__main__":
    main()
