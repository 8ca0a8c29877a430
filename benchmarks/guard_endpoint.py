"""The guarded endpoint (``POST /v1/tenants/{t}/chat/completions`` of ``norma serve --upstream``): what it adds to a
direct call of the upstream, next to a real LiteLLM proxy and a bare proxy in front of the same upstream, and 200
concurrent guarded requests.

The upstream is a loopback OpenAI-compatible server with a fixed latency (tests/service/_chat_upstream.py, 50 ms by
default) in this process. In front of it, each in a subprocess of its own (one worker, real HTTP on 127.0.0.1), all
running at once:

* ``norma serve`` with the default fp32 encoder, and ``norma serve --int8``, over a SQLite store holding the 28-rule
  banking rulebook (examples/rulebooks/banking-support.yaml) as its tenant, no judge;
* benchmarks/_bare_proxy.py (FastAPI and httpx, nothing else), without and with the one embedding of the message
  (fp32, int8) a guarded turn needs before the model is called;
* a real LiteLLM proxy (``litellm --config``, the upstream as ``openai/bench``, a master key, no guardrail, no
  database): ``$NORMA_LITELLM``, else .litellm-venv/bin/litellm (``make bench-litellm``), else the one beside this
  Python, else on PATH; without one its rows say so and the rest is measured.

Each request is one labelled message of the rulebook, made unique by its index. Timed from the client: a direct call
of the upstream, then the same call through the server, alternately, one at a time; norma's calls are

* ``plain``: not streamed, policy ``flag`` (one upstream call per turn, whatever the verdict);
* ``stream, flag``: streamed, the upstream's events passed through, the verdict as a last event (time to the end of
  the stream);
* ``stream, block``: streamed, the answer held and checked, then sent (one upstream call without streaming);

the bare proxy's not streamed, LiteLLM's not streamed and streamed. The servers take turns in rounds (``--rounds``,
the starting server rotating), each round a share of every row's requests, so every comparison is of like moments;
a row's added p50 is the median over rounds of each round's median of the per-request differences.

Targets (issue #58, relative: an absolute figure depends on the machine): with each encoder, the guarded call adds
no more than LiteLLM's own proxy (added p50 minus LiteLLM's, per round, median over rounds: <= 0), and no more than
1 ms over the bare proxy that embeds the message once with the same encoder. Then 200 guarded requests at once
(``norma serve``, policy ``flag``, the other servers stopped): no error, and no upstream connection left open beyond
the client pool's idle bound (50) after the burst, none after norma stops. No tuned default is involved.

Run ``.venv/bin/python benchmarks/guard_endpoint.py`` (``--requests N`` per row, ``--rounds R``, ``--latency S``,
``--no-write`` to leave docs/benchmarks.md alone); ``make bench-litellm`` first for the LiteLLM rows.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.service._chat_upstream import ChatUpstream  # noqa: E402
from tests.service._server import (  # noqa: E402
    free_port,
    litellm_command,
    litellm_proxy,
    serve_process,
    stop_process,
    wait_healthy,
)

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
LITELLM_TARGET_MS = 0.0
"""The guarded call's added p50 minus LiteLLM's (no guardrail), same run, per round: at most this."""
EMBED_TARGET_MS = 1.0
"""The guarded call's added p50 minus the bare proxy embedding the message with the same encoder: at most this."""
LITELLM_KEY = "sk-bench"
LITELLM_MISSING = "not measured: run `make bench-litellm`"


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
    0 for any other server); RuntimeError on an error status."""
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


@dataclass
class _Row:
    """One row of the table: the server at ``url``, called with ``headers``, streamed or not, with a norma policy
    or none; its samples over every round, and each round's median of the per-request differences."""

    url: str
    headers: dict[str, str]
    stream: bool
    policy: str | None
    direct: list[float] = field(default_factory=list)
    through: list[float] = field(default_factory=list)
    own: list[float] = field(default_factory=list)
    rounds: list[float] = field(default_factory=list)

    def run(self, client: httpx.Client, direct: str, messages: list[str], n: int, *, keep: bool = True) -> None:
        """``n`` requests, each direct then through this server; kept as one round unless ``keep`` is false (a
        warm-up)."""
        plain: list[float] = []
        through: list[float] = []
        own: list[float] = []
        start = len(self.through)
        for i in range(start, start + n):
            message = f"{messages[i % len(messages)]} ({i})"
            plain.append(_call(client, direct, _body(message, stream=self.stream), {})[0])
            took, guard_ms = _call(
                client, self.url, _body(message, stream=self.stream, policy=self.policy), self.headers
            )
            through.append(took)
            own.append(guard_ms)
        if keep:
            self.direct += plain
            self.through += through
            self.own += own
            self.rounds.append(statistics.median(t - p for t, p in zip(through, plain, strict=True)))

    def summary(self) -> dict[str, Any]:
        return {
            "guard_p50": statistics.median(self.own),
            "direct_p50": statistics.median(self.direct),
            "guarded_p50": statistics.median(self.through),
            "added_p50": statistics.median(self.rounds),
            "guarded_p95": _pct(self.through, 0.95),
            "rounds": list(self.rounds),
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
LITELLM_CALLS = (("plain", "not streamed", False), ("stream", "streamed", True))
"""The other reference: a real LiteLLM proxy with no guardrail, not streamed and streamed."""
LITELLM_LABELS = {name: label for name, label, _stream in LITELLM_CALLS}
VERSUS_LITELLM = (("plain", "plain"), ("stream_flag", "stream"), ("stream_block", "stream"))
"""Each norma call against LiteLLM's call of the same kind for the client (not streamed, streamed)."""


def _litellm_version(command: list[str]) -> str:
    """The installed litellm's version: asked of the Python its script runs on, else ``litellm --version``."""
    with contextlib.suppress(OSError, subprocess.SubprocessError, UnicodeDecodeError):
        with open(command[0], encoding="utf-8") as script:
            first = script.readline()
        if first.startswith("#!"):
            ask = "from importlib.metadata import version; print(version('litellm'))"
            done = subprocess.run([*first[2:].split(), "-c", ask], capture_output=True, text=True, timeout=60)
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout.strip()
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run([*command, "--version"], capture_output=True, text=True, timeout=120)
        found = re.search(r"Current Version = (\S+)", done.stdout + done.stderr)
        if found:
            return found.group(1)
    return "unknown"


@contextlib.contextmanager
def _litellm_proxy(command: list[str], upstream: str, folder: Path) -> Iterator[str]:
    """A LiteLLM proxy serving ``bench`` (``openai/bench`` at ``upstream``) on a free port, no guardrail, no
    database; RuntimeError (with its log's last lines) if it exits or is not live within 120 s."""
    config = (
        "model_list:\n"
        "  - model_name: bench\n"
        "    litellm_params:\n"
        "      model: openai/bench\n"
        f"      api_base: {upstream}\n"
        "      api_key: bench-key\n"
        "general_settings:\n"
        f"  master_key: {LITELLM_KEY}\n"
    )
    with litellm_proxy(command, config, folder, env={"LITELLM_MASTER_KEY": LITELLM_KEY}) as url:
        yield url


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


def _norma(db: str, upstream: str, encoder: str, folder: Path) -> contextlib.AbstractContextManager[Any]:
    args = ["--db", db, "--upstream", upstream, "--rate-limit", "0", "--log-level", "warning"]
    paths = [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]  # this checkout's norma
    env = {
        "NORMA_UPSTREAM_API_KEY": "bench-key",
        "NORMA_LLM_URL": "",
        "PYTHONPATH": os.pathsep.join(paths),
        INT8_ENV: "1" if encoder == "int8" else "0",
    }
    return serve_process(args, log=folder / f"serve-{encoder}.log", env=env)


def measure(requests: int, rounds: int, latency: float, concurrent: int) -> dict[str, Any]:
    messages = [json.loads(line)["message"] for line in LABELLED.read_text(encoding="utf-8").splitlines() if line]
    folder = Path(tempfile.mkdtemp(prefix="norma-guard-endpoint-"))
    db = f"sqlite:///{folder / 'norma.db'}"
    store = open_store(db)
    store.upsert_rules(TENANT, list(load_rulebook(RULEBOOK, tenant_id=TENANT).rules))
    key = store.create_api_key(TENANT, name="bench")
    store.close()
    per_round = math.ceil(requests / rounds)
    out: dict[str, Any] = {"latency_ms": latency * 1000, "requests": per_round * rounds, "rounds": rounds}
    out["concurrent"] = concurrent
    command = litellm_command()
    out["litellm"] = _litellm_version(command) if command else None
    print(f"litellm: {command[0] if command else 'none'} (version {out['litellm']})", flush=True)
    out["load_start"] = os.getloadavg()
    auth = {"Authorization": f"Bearer {key}"}
    with ChatUpstream(latency=latency, default=ANSWER, record=False) as up, contextlib.ExitStack() as outer:
        direct = f"{up.url}/chat/completions"
        fp32 = contextlib.ExitStack()  # norma fp32 outlives the others: the burst comes last
        outer.enter_context(fp32)
        others = outer.enter_context(contextlib.ExitStack())
        client = others.enter_context(httpx.Client(timeout=60))
        units: list[tuple[str, dict[str, _Row]]] = []  # one server each, in their order in a round
        urls: dict[str, str] = {}
        for encoder in ENCODERS:
            url, _proc = (fp32 if encoder == "fp32" else others).enter_context(_norma(db, up.url, encoder, folder))
            urls[encoder] = url
            guarded = f"{url}/v1/tenants/{TENANT}/chat/completions"
            units.append(
                (encoder, {f"{encoder}/{n}": _Row(guarded, auth, stream, policy) for n, _l, stream, policy in CALLS})
            )
        for encoder, _label in BARE:
            url = others.enter_context(_bare_proxy(up.url, encoder, folder / f"bare-{encoder or 'none'}.log"))
            units.append((f"bare/{encoder}", {f"bare/{encoder}": _Row(f"{url}/chat/completions", {}, False, None)}))
        if command is not None:
            try:
                url = others.enter_context(_litellm_proxy(command, up.url, folder))
            except RuntimeError as exc:
                print(exc, file=sys.stderr)
                said = [line.strip() for line in str(exc).splitlines() if line.strip()]
                last = f" ({said[-1][:200]})" if len(said) > 1 else ""
                out["litellm_failed"] = said[0].rstrip(":") + last.replace("|", "/")
            else:
                headers = {"Authorization": f"Bearer {LITELLM_KEY}"}
                rows = {f"litellm/{n}": _Row(f"{url}/chat/completions", headers, s, None) for n, _l, s in LITELLM_CALLS}
                units.append(("litellm", rows))
        for _name, rows in units:  # warm-up
            for row in rows.values():
                row.run(client, direct, messages, 20, keep=False)
        for r in range(rounds):
            turn = units[r % len(units) :] + units[: r % len(units)]
            for _name, rows in turn:
                for row in rows.values():
                    row.run(client, direct, messages, per_round)
            print(f"round {r + 1}/{rounds}: " + ", ".join(name for name, _ in turn), flush=True)
        for _name, rows in units:
            for key_, row in rows.items():
                out[key_] = row.summary()
        for encoder in ENCODERS:
            out[f"{encoder}/match_p50"] = _match_p50(client, urls[encoder], key, messages, requests)
            out[f"{encoder}/match_idle_p50"] = _match_p50(client, urls[encoder], key, messages, requests, idle=latency)
        others.close()  # every server but norma fp32, and the client's connections
        time.sleep(1.0)
        guarded = f"{urls['fp32']}/v1/tenants/{TENANT}/chat/completions"
        before = up.open
        up.peak = up.open
        errors, seconds = asyncio.run(_burst(guarded, key, messages, concurrent))
        time.sleep(1.0)  # the burst's connections back in the pool, or closed
        out.update(errors=errors, burst_s=seconds, open_before=before, peak=up.peak, open_after=up.open)
        fp32.close()
        up.wait_for(lambda: up.open == 0, timeout=10)
        out["open_stopped"] = up.open
    out["load_end"] = os.getloadavg()
    return out


def _versus(row: dict[str, Any], mine: str, theirs: str) -> tuple[float, float, float]:
    """The median over rounds of ``mine``'s added p50 minus ``theirs`` in the same round, and the range."""
    diffs = [a - b for a, b in zip(row[mine]["rounds"], row[theirs]["rounds"], strict=True)]
    return statistics.median(diffs), min(diffs), max(diffs)


def verdicts(row: dict[str, Any]) -> list[str]:
    """One line per norma encoder: each call against LiteLLM's (target <= 0), the not streamed call against the bare
    proxy embedding with the same encoder (target <= 1 ms)."""
    lines = []
    for encoder in ENCODERS:
        server = "`norma serve`" if encoder == "fp32" else "`norma serve --int8`"
        parts = []
        for name, theirs in VERSUS_LITELLM:
            label = next(label for n, label, *_ in CALLS if n == name)
            if f"litellm/{theirs}" not in row:
                parts.append(f"{label} − LiteLLM: not measured")
                continue
            mid, low, high = _versus(row, f"{encoder}/{name}", f"litellm/{theirs}")
            met = "met" if mid <= LITELLM_TARGET_MS else "**not met**"
            parts.append(
                f"{label} − LiteLLM {LITELLM_LABELS[theirs]}: {mid:+.1f} ms ({low:+.1f} to {high:+.1f}), {met}"
            )
        mid, low, high = _versus(row, f"{encoder}/plain", f"bare/{encoder}")
        met = "met" if mid <= EMBED_TARGET_MS else "**not met**"
        parts.append(
            f"not streamed − bare proxy + embedding, {encoder}: {mid:+.1f} ms ({low:+.1f} to {high:+.1f}), {met}"
        )
        lines.append(f"- {server}: " + "; ".join(parts) + ".")
    return lines


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
    litellm = f"LiteLLM proxy {row['litellm']}" if row["litellm"] not in (None, "unknown") else "LiteLLM proxy"
    for name, label, _stream in LITELLM_CALLS:
        if f"litellm/{name}" not in row:
            why = f"not measured: {row['litellm_failed']}" if "litellm_failed" in row else LITELLM_MISSING
            table.append(f"| {litellm}, no guardrail (reference) | {label}: {why} | — | — | — | — | — |")
            continue
        r = row[f"litellm/{name}"]
        cells = [r["direct_p50"], r["guarded_p50"], r["added_p50"], r["guarded_p95"]]
        table.append(
            f"| {litellm}, no guardrail (reference) | {label} | " + " | ".join(f"{c:.1f}" for c in cells) + " | — |"
        )
    start, end = row["load_start"], row["load_end"]
    lines = [
        BEGIN,
        "## guard: the guarded endpoint",
        "",
        f"{machine_line()}; `benchmarks/guard_endpoint.py` (no tuned defaults involved); load average "
        f"{start[0]:.1f}, {start[1]:.1f}, {start[2]:.1f} at the start, {end[0]:.1f}, {end[1]:.1f}, {end[2]:.1f} at "
        f"the end ({os.cpu_count()} cores).",
        "",
        f"In front of a loopback OpenAI-compatible upstream answering in {row['latency_ms']:.0f} ms, each server in a "
        "process of its own (one worker, real HTTP on 127.0.0.1), all running at once: `norma serve --upstream` with "
        "the 28-rule banking rulebook, no judge, with each encoder; benchmarks/_bare_proxy.py (FastAPI and httpx "
        "forwarding the body, no key, no rules, no check), then the same with the one embedding of the message a "
        "guarded turn needs before the model is called; "
        + (
            f"a LiteLLM proxy {row['litellm']} (`litellm --config`, the upstream as `openai/bench`, a master key, no "
            "guardrail, no database)"
            if "litellm/plain" in row
            else "no LiteLLM proxy (" + row.get("litellm_failed", LITELLM_MISSING) + ")"
        )
        + f". {row['requests']:,} requests per row in {row['rounds']} rounds, the servers taking turns (the first "
        "rotating), each request timed directly against the upstream and through the server, alternately; added: "
        "the median over rounds of each round's median of the per-request differences (the other columns over all "
        "of a row's requests); the guard's own work: `norma.guard_ms` (matching, the rules into the prompt, the turn "
        "check).",
        "",
        *table,
        "",
        f"Targets (issue #58), per round then the median over rounds (range over rounds in brackets): added p50 "
        f"minus LiteLLM's, target <= {LITELLM_TARGET_MS:.0f} ms; the not streamed call minus the bare proxy "
        f"embedding with the same encoder, target <= {EMBED_TARGET_MS:.0f} ms.",
        "",
        *verdicts(row),
        "",
        "For scale, `POST /v1/tenants/{t}/match` of the same messages (the service matching one message, no "
        "upstream) after the rounds: "
        + "; ".join(
            f"{e} {row[f'{e}/match_p50']:.1f} ms p50 back to back, {row[f'{e}/match_idle_p50']:.1f} ms p50 with the "
            f"server left idle {row['latency_ms']:.0f} ms before each request, as it is while a model answers"
            for e in ENCODERS
        )
        + ".",
        "",
        f"{row['concurrent']} guarded requests at once (`norma serve`, the other servers stopped): {row['errors']} "
        f"errors in {row['burst_s']:.2f} s; connections open at the upstream: {row['open_before']} before, at most "
        f"{row['peak']} during, {row['open_after']} after (idle ones the pool keeps, bound {KEEPALIVE_BOUND}), "
        f"{row['open_stopped']} once norma stopped.",
        END,
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per row, over all rounds")
    parser.add_argument("--rounds", type=int, default=5, help="rounds the servers take turns in")
    parser.add_argument("--latency", type=float, default=0.05, help="the upstream's latency in seconds")
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/benchmarks.md alone")
    args = parser.parse_args()
    os.environ.pop("NORMA_SERVICE_SETTINGS", None)
    text = render(measure(args.requests, args.rounds, args.latency, args.concurrent))
    print(text)
    if not args.no_write:
        write_section(text, BEGIN, END, BEFORE)


if __name__ == "__main__":
    main()
