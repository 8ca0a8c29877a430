"""Writing a benchmark's own section of docs/benchmarks.md, and nothing else of it."""

from __future__ import annotations

import datetime as dt
import os
import platform
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"


def write_section(text: str, begin: str, end: str, before: str, doc: Path = DOC) -> None:
    """Replace what lies between the ``begin`` and ``end`` markers (both included) with ``text``, which holds them;
    the first time, put ``text`` right before the heading ``before`` (else at the end)."""
    current = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    start, stop = current.find(begin), current.find(end)
    if start != -1 and stop != -1:
        current = current[:start] + text + current[stop + len(end) + 1 :]
    elif before in current:
        at = current.find(before)
        current = current[:at] + text + "\n" + current[at:]
    else:
        current = current.rstrip("\n") + "\n\n" + text
    doc.write_text(current, encoding="utf-8")


def encoders_line() -> str:
    """The encoders a benchmark can embed with: the default one (``$NORMA_EMBEDDINGS_INT8``) first, each with its
    identity, precision, encoder version, batching and onnxruntime kernel on this CPU."""
    from norma.embeddings import encoder_for
    from norma.errors import NormaError

    try:
        default = encoder_for()
        other = encoder_for(quantize=default.precision != "int8")
    except NormaError as exc:  # no model installed: say so, the rest of the line stands
        return f"encoders: unknown ({exc})"
    return f"encoder (default): {default.describe()}; the other: {other.describe()}"


def machine_line() -> str:
    """The machine a benchmark ran on: date, CPU model and the features that pick integer kernels, cores, Python,
    onnxruntime, the kernel of the int8 scan, and the encoders (:func:`encoders_line`)."""
    from importlib.metadata import version

    from norma.matching import SCAN_KERNEL, cpu_flags

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    except OSError:
        pass
    flags = " ".join(cpu_flags()) or "unknown"
    return (
        f"machine: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {model}, CPU flags {flags}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, onnxruntime {version('onnxruntime')}; int8 scan: {SCAN_KERNEL}; "
        f"{encoders_line()}"
    )
