"""The guarded endpoint (``POST /v1/tenants/{t}/chat/completions`` of ``norma serve --upstream``): what it adds to a
direct call of the upstream, and 200 concurrent guarded requests.

The upstream is a loopback OpenAI-compatible server with a fixed latency (tests/service/_chat_upstream.py, 50 ms by
default) in this process; norma is ``norma serve`` in a subprocess (uvicorn, one worker, real HTTP on 127.0.0.1)
over a SQLite store holding the 28-rule banking rulebook (examples/rulebooks/banking-support.yaml) as its
tenant, no judge. Each request is one labelled message of the rulebook, made unique by its index. Timed from the
client: a direct call of the upstream, then the same call through norma, alternately, one at a time:

* ``plain``: not streamed, policy ``flag`` (one upstream call per turn, whatever the verdict);
* ``stream, flag``: streamed, the upstream's events passed through, the verdict as a last event (time to the end of
  the stream);
* ``stream, block``: streamed, the answer held and checked, then sent (one upstream call without streaming).

Target: the guarded call adds <= 10 ms p50 to the direct one. Measured with the default fp32 encoder and with
``norma serve --int8``, then, as a reference, for a bare proxy (benchmarks/_bare_proxy.py: FastAPI and httpx, nothing
else) without and with the one embedding of the message that a guarded turn needs before the model is called. Then
200 guarded requests at once (policy ``flag``, fp32): no error, and no upstream connection left open beyond the
client pool's idle bound (50) after the burst, none after norma stops. No tuned default is involved.

Run ``.venv/bin/python benchmarks/guard_endpoint.py`` (``--requests N``, ``--latency S``, ``--no-write`` to leave
docs/benchmarks.md alone).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.service._chat_upstream import ChatUpstream  # noqa: E402
from tests.service._server import free_port, serve_process, stop_process, wait_healthy  # noqa: E402

from _docs import machine_line, write_section  # noqa: E402
from norma.embeddings import INT8_ENV  # noqa: E402
from norma.rules import load_rulebook  # noqa: E402
from norma.store import open_store  # noqa: E402

BEGIN, END = "<!-- guard_endpoint.py:begin -->", "<!-- guard_endpoint.py:end -->"
BEFORE = "## service: store outage\n"
RULEBOOK = ROOT / "examples" / "rulebooks" / "banking-support.yaml"
LABELLED = ROOT / "examples" / "rulebooks" / "banking-support.labelled.jsonl"
ANSWER = "Thanks for reaching out: I have looked at your account and here is what we can do next."
TENANT = "northwind-bank"
KEEPALIVE_BOUND = 50  # norma.service._upstream.MAX_KEEPALIVE
TARGET_MS = 10.0


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _body(message: str, *, stream: bool, policy: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "bench", "messages": [{"role": "user", "content": message}], "stream": stream}
    if policy is not None:
        body["norma"] = {"policy": policy}
    return body


def _call(client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[float, float]:
    """Milliseconds for one whole answer (a stream read to its end), and the guard's own work (``norma.guard_ms``;
    0 for a direct call); RuntimeError on an error status."""
    started = time.perf_counter()
    if body["stream"]:
        with client.stream("POST", url, json=body, headers=headers) as response:
            text = "".join(response.iter_text())
            if response.status_code != 200 or not text.rstrip().endswith("[DONE]"):
                raise RuntimeError(f"{url}: {response.status_code} {text[-200:]}")
        took = (time.perf_counter() - started) * 1000
        last = text.rstrip().split("\n\n")[-2].removeprefix("data: ")
        return took, float(json.loads(last).get("norma", {}).get("guard_ms", 0.0))
    response = client.post(url, json=body, headers=headers)
    took = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{url}: {response.status_code} {response.text[:200]}")
    return took, float(response.json().get("norma", {}).get("guard_ms", 0.0))


def _pairs(
    client: httpx.Client, direct: str, guarded: str, key: str, messages: list[str], n: int, *, stream: bool, policy: str
) -> dict[str, float]:
    auth = {"Authorization": f"Bearer {key}"}
    plain: list[float] = []
    through: list[float] = []
    own: list[float] = []
    for i in range(n):
        message = f"{messages[i % len(messages)]} ({i})"
        plain.append(_call(client, direct, _body(message, stream=stream), {})[0])
        took, guard_ms = _call(client, guarded, _body(message, stream=stream, policy=policy), auth)
        through.append(took)
        own.append(guard_ms)
    return {
        "guard_p50": statistics.median(own),
        "direct_p50": statistics.median(plain),
        "guarded_p50": statistics.median(through),
        "added_p50": statistics.median(t - p for t, p in zip(through, plain, strict=True)),
        "guarded_p95": _pct(through, 0.95),
    }


def _match_p50(client: httpx.Client, url: str, key: str, messages: list[str], n: int, idle: float = 0.0) -> float:
    """p50 of ``POST /v1/tenants/{t}/match`` of the same messages: the service's cost of matching one message
    (``idle``: seconds the server is left idle before each, as while a model answers)."""
    took: list[float] = []
    for i in range(n):
        time.sleep(idle)
        started = time.perf_counter()
        response = client.post(
            f"{url}/v1/tenants/{TENANT}/match",
            json={"message": f"{messages[i % len(messages)]} <{i}>"},
            headers={"Authorization": f"Bearer {key}"},
        )
        took.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"match: {response.status_code} {response.text[:200]}")
    return statistics.median(took)


async def _burst(url: str, key: str, messages: list[str], n: int) -> tuple[int, float]:
    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:

        async def one(i: int) -> bool:
            try:
                body = _body(f"{messages[i % len(messages)]} [{i}]", stream=False, policy="flag")
                response = await client.post(url, json=body, headers={"Authorization": f"Bearer {key}"})
                return response.status_code == 200 and "norma" in response.json()
            except httpx.HTTPError:
                return False

        started = time.perf_counter()
        results = await asyncio.gather(*(one(i) for i in range(n)))
        return sum(not ok for ok in results), time.perf_counter() - started


ENCODERS = ("fp32", "int8")
"""The default encoder, then the int8 one (``norma serve --int8``)."""
CALLS = (
    ("plain", "not streamed (flag)", False, "flag"),
    ("stream_flag", "streamed, passed through (flag)", True, "flag"),
    ("stream_block", "streamed, held and checked (block)", True, "block"),
)
BARE = (
    ("", "bare proxy"),
    ("fp32", "bare proxy + embedding the message, fp32"),
    ("int8", "bare proxy + embedding the message, int8"),
)
"""The reference: benchmarks/_bare_proxy.py without and with the one embedding the guarded endpoint cannot skip."""


@contextlib.contextmanager
def _bare_proxy(upstream: str, encoder: str, log: Path) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "BARE_UPSTREAM": upstream, "BARE_EMBED": encoder}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
    command = [sys.executable, "-m", "uvicorn", "_bare_proxy:app", "--app-dir", str(ROOT / "benchmarks")]
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.Popen([*command, "--port", str(port), "--log-level", "warning"], env=env, stderr=err)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc=proc)
        yield url
    finally:
        stop_process(proc)


def measure(requests: int, latency: float, concurrent: int) -> dict[str, Any]:
    messages = [json.loads(line)["message"] for line in LABELLED.read_text(encoding="utf-8").splitlines() if line]
    folder = Path(tempfile.mkdtemp(prefix="norma-guard-endpoint-"))
    db = f"sqlite:///{folder / 'norma.db'}"
    store = open_store(db)
    store.upsert_rules(TENANT, list(load_rulebook(RULEBOOK, tenant_id=TENANT).rules))
    key = store.create_api_key(TENANT, name="bench")
    store.close()
    rows: dict[str, Any] = {"latency_ms": latency * 1000, "requests": requests, "concurrent": concurrent}
    rows["load_start"] = os.getloadavg()[0]
    with ChatUpstream(latency=latency, default=ANSWER, record=False) as up:
        direct = f"{up.url}/chat/completions"
        for encoder in ENCODERS:
            args = ["--db", db, "--upstream", up.url, "--rate-limit", "0", "--log-level", "warning"]
            paths = [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]  # this checkout's norma
            env = {
                "NORMA_UPSTREAM_API_KEY": "bench-key",
                "NORMA_LLM_URL": "",
                "PYTHONPATH": os.pathsep.join(paths),
                INT8_ENV: "1" if encoder == "int8" else "0",
            }
            with (
                serve_process(args, log=folder / f"serve-{encoder}.log", env=env) as (url, _proc),
                httpx.Client(timeout=60) as client,
            ):
                guarded = f"{url}/v1/tenants/{TENANT}/chat/completions"
                for _name, _label, stream, policy in CALLS:  # warm-up
                    _pairs(client, direct, guarded, key, messages, 20, stream=stream, policy=policy)
                for name, _label, stream, policy in CALLS:
                    rows[f"{encoder}/{name}"] = _pairs(
                        client, direct, guarded, key, messages, requests, stream=stream, policy=policy
                    )
                rows[f"{encoder}/match_p50"] = _match_p50(client, url, key, messages, requests)
                rows[f"{encoder}/match_idle_p50"] = _match_p50(client, url, key, messages, requests, idle=latency)
                if encoder != ENCODERS[0]:
                    continue
                time.sleep(0.5)
                before = up.open
                up.peak = up.open
                errors, seconds = asyncio.run(_burst(guarded, key, messages, concurrent))
                time.sleep(1.0)  # the burst's connections back in the pool, or closed
                rows.update(errors=errors, burst_s=seconds, open_before=before, peak=up.peak, open_after=up.open)
            up.wait_for(lambda: up.open == 0, timeout=10)
            if encoder == ENCODERS[0]:
                rows["open_stopped"] = up.open
        for encoder, _label in BARE:
            with (
                _bare_proxy(up.url, encoder, folder / f"bare-{encoder or 'none'}.log") as url,
                httpx.Client(timeout=60) as client,
            ):
                proxied = f"{url}/chat/completions"
                _pairs(client, direct, proxied, key, messages, 20, stream=False, policy="flag")  # warm-up
                rows[f"bare/{encoder}"] = _pairs(
                    client, direct, proxied, key, messages, requests, stream=False, policy="flag"
                )
    rows["load_end"] = os.getloadavg()[0]
    return rows


def render(row: dict[str, Any]) -> str:
    table = [
        "| server | call | direct p50 ms | through p50 ms | added p50 ms | through p95 ms | guard's own work p50 ms |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for encoder in ENCODERS:
        server = "`norma serve`" if encoder == "fp32" else "`norma serve --int8`"
        for name, label, _stream, _policy in CALLS:
            r = row[f"{encoder}/{name}"]
            cells = [r["direct_p50"], r["guarded_p50"], r["added_p50"], r["guarded_p95"], r["guard_p50"]]
            table.append(f"| {server} | {label} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    for encoder, label in BARE:
        r = row[f"bare/{encoder}"]
        cells = [r["direct_p50"], r["guarded_p50"], r["added_p50"], r["guarded_p95"]]
        table.append(f"| {label} (reference) | not streamed | " + " | ".join(f"{c:.1f}" for c in cells) + " | — |")
    met = [
        f"`{'norma serve' if e == 'fp32' else 'norma serve --int8'}` {n.replace('_', ' ')}"
        for e in ENCODERS
        for n, *_ in CALLS
        if row[f"{e}/{n}"]["added_p50"] <= TARGET_MS
    ]
    lines = [
        BEGIN,
        "## guard: the guarded endpoint",
        "",
        f"{machine_line()}; `benchmarks/guard_endpoint.py` (no tuned defaults involved); load average "
        f"{row['load_start']:.1f} at the start, {row['load_end']:.1f} at the end (2 cores).",
        "",
        f"`norma serve --upstream` (one uvicorn worker, real HTTP on 127.0.0.1) in front of a loopback "
        f"OpenAI-compatible upstream answering in {row['latency_ms']:.0f} ms, the 28-rule banking rulebook, no judge; "
        f"{row['requests']:,} requests per row, each timed directly against the upstream and through the server, "
        "alternately (added: the median of the per-request differences; the guard's own work: `norma.guard_ms`, "
        "matching, the rules into the prompt, the turn check). The reference rows are benchmarks/_bare_proxy.py in "
        "front of the same upstream: FastAPI and httpx forwarding the body, no key, no rules, no check, then the same "
        f"with the one embedding of the message a guarded turn needs before the model is called. Target: <= "
        f"{TARGET_MS:.0f} ms added p50; met here by: {', '.join(met) or 'none'}.",
        "",
        *table,
        "",
        "For scale, `POST /v1/tenants/{t}/match` of the same messages (the service matching one message, no "
        "upstream) in the same run: "
        + "; ".join(
            f"{'fp32' if e == 'fp32' else 'int8'} {row[f'{e}/match_p50']:.1f} ms p50 back to back, "
            f"{row[f'{e}/match_idle_p50']:.1f} ms p50 with the server left idle {row['latency_ms']:.0f} ms before "
            "each request, as it is while a model answers"
            for e in ENCODERS
        )
        + ".",
        "",
        f"{row['concurrent']} guarded requests at once (`norma serve`): {row['errors']} errors in "
        f"{row['burst_s']:.2f} s; connections open at the upstream: {row['open_before']} before, at most "
        f"{row['peak']} during, {row['open_after']} after (idle ones the pool keeps, bound {KEEPALIVE_BOUND}), "
        f"{row['open_stopped']} once norma stopped.",
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05, help="the upstream's latency in seconds")
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/benchmarks.md alone")
    args = parser.parse_args()
    os.environ.pop("NORMA_SERVICE_SETTINGS", None)
    text = render(measure(args.requests, args.latency, args.concurrent))
    print(text)
    if not args.no_write:
        write_section(text, BEGIN, END, BEFORE)


if __name__ == "__main__":
    main()
