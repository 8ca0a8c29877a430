"""Latency of ``norma.audit.analyze`` on a ~2 KB technical answer, and batch throughput with 2 workers.

Rows: deterministic rules only (``embeddings=False``; target <= 2 ms per output), the full pipeline with the
embedding checks (IR.3.01, IR.4.01; target <= 50 ms) on the answer as it is (every concept is found literally, so
the model is not called) and with a paragraph of five concepts the checks must embed, the full pipeline with two
re-runs for IR.6.02 (every paragraph of three runs embedded), and
``analyze_batch`` over 4,000 records with 1 and 2 worker processes (process start-up and model load included).
The documents' vocabulary vectors are built once before timing (a server keeps them); each timed audit embeds
its own output's concepts and input pieces afresh (the per-audit memo starts empty).

Usage::

    .venv/bin/python benchmarks/audit_bench.py [--repeat 300] [--write]

``--write`` replaces the tables between the ``<!-- audit_bench.py:begin -->`` / ``<!-- audit_bench.py:end -->``
markers of docs/benchmarks.md (nothing else of the page).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from norma.audit import AuditConfig, analyze, analyze_batch, load_documents

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- audit_bench.py:begin -->", "<!-- audit_bench.py:end -->"
DOCS = REPO / "examples" / "audit" / "docs"

ANSWER = """Implemento la política por defecto de DNS §2.03 como `TokenBucketPolicy`, que implementa `IShapingPolicy`
(DNS §2.02). La cubeta tiene capacidad `BurstBytes` y se recarga a `RateBytesPerSecond` (DNS §2.03).

- El `FlowShaper` de cada flujo usa la política inyectada (DNS §2.01).
- Los tokens se recargan según el tiempo transcurrido con `Stopwatch.GetTimestamp()` (DNS §3.02).
- El estado compartido se actualiza con `Interlocked`, sin `lock` (DNS §3.01).
- Un paquete que no cabe se descarta y se cuenta en `DroppedPackets` (DNS §4.01, RED §2.01).
- Los paquetes `Interactive` salen antes que los `Bulk` (DR R2.03).

```csharp
namespace NetShaper.Engine;

public sealed class TokenBucketPolicy : IShapingPolicy
{
    private long _tokens;
    private long _lastTicks;

    public TokenBucketPolicy(long burstBytes, long rateBytesPerSecond)
    {
        BurstBytes = burstBytes;
        RateBytesPerSecond = rateBytesPerSecond;
        _tokens = burstBytes;
    }

    public long BurstBytes { get; }
    public long RateBytesPerSecond { get; }

    public bool Decide(Packet packet, long nowTicks)
    {
        var elapsed = nowTicks - Interlocked.Exchange(ref _lastTicks, nowTicks);
        var refill = elapsed * RateBytesPerSecond / Stopwatch.Frequency;
        var tokens = Math.Min(BurstBytes, Interlocked.Read(ref _tokens) + refill);
        if (tokens < packet.Length) { return false; }
        Interlocked.Exchange(ref _tokens, tokens - packet.Length);
        return true;
    }
}
```

Las pruebas usan un reloj simulado `FakeClock` (RED §1.02): cada prueba avanza el reloj y comprueba que la
cubeta deja pasar una ráfaga de `BurstBytes` y después solo `RateBytesPerSecond` por segundo. Los contadores
`DroppedPackets`, `QueuedPackets` y `ReleasedPackets` se exponen por flujo (RED §2.01), y el marcado DSCP de los
paquetes `Interactive` no cambia (DR R3.01). La tasa contratada nunca es negativa (DR R2.01) y la ráfaga no
supera un segundo de tasa (DR R2.02); el constructor valida ambas condiciones antes de crear la cubeta.
"""

NOVEL = """
El motor usa un `RefillScheduler` y un `BurstGuard`; el `FlowRegistry` publica en un `ShapingMetricsSink` y
cachea clasificaciones en un `PacketClassifierCache` (DNS §1.02).
"""

REQUEST: dict[str, Any] = {
    "input": "Implementa la clase TokenBucketPolicy de NetShaper según el DNS, con pruebas",
    "output": ANSWER,
    "context_type": "technical",
    "active_documents": [
        "Documento_Normativo_Superior.md",
        "Domain_Rules.md",
        "IA_Context_Rules.md",
        "Reglas_Ejecutables_Derivadas.md",
    ],
    "document_versions": {"DNS": "1.0", "DR": "1.0", "ICR": "2.0", "RED": "1.0"},
}


def _latency(request: dict[str, Any], config: AuditConfig, repeat: int) -> tuple[float, float, float, str]:
    """Wall-clock p50 and p95 and the mean CPU time (all threads of the process), in ms."""
    docs = load_documents(DOCS)
    report = analyze(request, docs, config)  # warm: model, vocabulary vectors, word lists
    times = []
    cpu_start = time.process_time()
    for _ in range(repeat):
        start = time.perf_counter()
        analyze(request, docs, config)
        times.append((time.perf_counter() - start) * 1000)
    cpu = (time.process_time() - cpu_start) * 1000 / repeat
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], cpu, report.result.value


def _throughput(workers: int, config: AuditConfig, count: int) -> float:
    records = [(f"bench:{i}", REQUEST) for i in range(count)]
    start = time.perf_counter()
    items = analyze_batch(records, DOCS, config, workers=workers)
    elapsed = time.perf_counter() - start
    assert all(item.report is not None for item in items)
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--batch", type=int, default=4000)
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md between its markers")
    args = parser.parse_args()
    load_before = os.getloadavg()
    size = len(ANSWER.encode("utf-8"))
    cheap, full = AuditConfig(embeddings=False), AuditConfig()
    reruns = {**REQUEST, "reruns": [ANSWER.replace("Implemento", "Implementamos"), ANSWER]}
    novel = {**REQUEST, "output": ANSWER + NOVEL}
    rows = [
        ("deterministic rules only", *_latency(REQUEST, cheap, args.repeat), "<= 2 ms"),
        (
            "full pipeline, every concept found literally",
            *_latency(REQUEST, full, max(50, args.repeat // 3)),
            "<= 50 ms",
        ),
        (
            "full pipeline, 5 concepts embedded (IR.3.01, IR.4.01)",
            *_latency(novel, full, max(50, args.repeat // 3)),
            "<= 50 ms",
        ),
        ("full pipeline + 2 re-runs (IR.6.02)", *_latency(reruns, full, max(30, args.repeat // 6)), "—"),
    ]
    lines = [
        f"Measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} cores "
        f"({platform.machine()}), Python {platform.python_version()}; answer {size:,} bytes; "
        "load average before: " + " ".join(f"{x:.2f}" for x in load_before),
        "",
        "| workload | p50 ms | p95 ms | CPU ms (mean) | verdict | target |",
        "|---|---:|---:|---:|---|---|",
        *(f"| {n} | {p50:.2f} | {p95:.2f} | {cpu:.2f} | {v} | {t} |" for n, p50, p95, cpu, v, t in rows),
        "",
        f"| batch of {args.batch:,} (start-up included) | records/s |",
        "|---|---:|",
    ]
    for label, config in (("deterministic", cheap), ("full pipeline", full)):
        for workers in (1, 2):
            lines.append(f"| {label}, {workers} worker(s) | {_throughput(workers, config, args.batch):,.0f} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        doc = DOC.read_text(encoding="utf-8")
        start, end = doc.find(BEGIN), doc.find(END)
        if start == -1 or end < start:
            raise SystemExit(f"{DOC} has no {BEGIN} ... {END} markers in its audit section")
        DOC.write_text(doc[: start + len(BEGIN)] + "\n" + text + "\n" + doc[end:], encoding="utf-8")
        print(f"wrote {DOC.relative_to(REPO)}")


if __name__ == "__main__":
    main()
