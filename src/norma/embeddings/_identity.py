"""Which encoder made a vector: the identity every kept vector is filed under, and what a doctor says of it.

An encoder's identity is its ``model_id``: the model's own id for the fp32 encoder
(``sentence-transformers/all-MiniLM-L6-v2``, unchanged since the first release, so stores keep their vectors), and
``<model id>#<precision>.<version>`` for another (``sentence-transformers/all-MiniLM-L6-v2#int8.2``). The version
moves whenever a change moves the vectors beyond float rounding. Everything that keeps vectors files them under
the whole id (a store's ``rule_vectors``, rulebook snapshots, embedding caches, a service's tenant matchers,
calibrated gates), so the vectors of another encoder, or of an older version of this one, are never read as this
one's.

The versions so far:

* fp32 1 (the model id alone): texts in batches of up to 32, sorted by length and padded to the longest; padding is
  masked, so a vector is the same to float rounding whatever its batch (measured: 1.2e-7 at most).
* int8 1 (``#int8``, norma 0.1.0 until issue #58): the same batches. onnxruntime's dynamic quantisation takes each
  activation's scale from the whole batch tensor, padding included, so a vector moved with its batch companions (up
  to 0.07 in one coordinate, and a few match decisions with it): never read again.
* int8 2 (``#int8.2``): every text alone, its own forward pass without padding, so its activations' scales are its
  own: a vector is a function of its text, bit for bit, whatever else is embedded with it.

The int8 encoder's matrix products run on the integer kernel onnxruntime (MLAS) picks from the CPU's features:
:func:`int8_kernel` names it, as ``onnxruntime/core/mlas/lib/platform.cpp`` picks it, from ``/proc/cpuinfo``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ENCODER_VERSIONS",
    "EncoderInfo",
    "cpu_features",
    "describe_encoder",
    "encoder_id",
    "encoder_info",
    "float_kernel",
    "int8_kernel",
]

ENCODER_VERSIONS: dict[str, int] = {"fp32": 1, "int8": 2}
"""The current version of each precision's encoder (see the module docstring)."""

_FEATURES = (
    "sse4_1", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_vnni", "avx_vnni",
    "amx_tile", "amx_int8", "asimd", "asimddp", "sve",
)  # fmt: skip
_SATURATES = "vpmaddubsw: u8 x s8 pairs summed in 16 bits, which can saturate"


def encoder_id(model_id: str, precision: str) -> str:
    """The identity of ``model_id``'s encoder at ``precision`` (``"fp32"`` or ``"int8"``), its current version."""
    if precision == "fp32":
        return model_id  # version 1: the id every store has kept its fp32 vectors under
    return f"{model_id}#{precision}.{ENCODER_VERSIONS[precision]}"


@functools.cache
def cpu_features() -> tuple[str, ...]:
    """The CPU features that decide onnxruntime's kernels, in a fixed order (from ``/proc/cpuinfo``; empty where it
    cannot be read, as on macOS and Windows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(("flags", "Features")):
                    have = set(line.split(":", 1)[1].split())
                    return tuple(flag for flag in _FEATURES if flag in have)
    except OSError:
        pass
    return ()


def _ort_version() -> str:
    try:
        from importlib.metadata import version

        return f"onnxruntime {version('onnxruntime')}"
    except Exception:  # not installed (the embedder would have said so already)
        return "onnxruntime"


def int8_kernel(features: Iterable[str] | None = None) -> str:
    """The MLAS kernel the int8 encoder's products (uint8 activations x int8 weights) run on, given the CPU's
    ``features`` (default :func:`cpu_features`), in onnxruntime's order of preference."""
    have = set(cpu_features() if features is None else features)
    if not have:
        return "unknown (the CPU's features cannot be read here)"
    if "asimd" in have or "asimddp" in have:
        return "ARM NEON dot product (udot, exact)" if "asimddp" in have else "ARM NEON (exact)"
    if "avx2" not in have or "fma" not in have:
        return "SSE (no AVX2)"
    if {"amx_tile", "amx_int8"} <= have:
        return "AMX int8 tiles (exact; where the OS grants AMX, else AVX-512 VNNI)"
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= have:
        if "avx512_vnni" in have:
            return "AVX-512 VNNI (vpdpbusds: 32-bit sums, exact)"
        return f"AVX-512, no VNNI ({_SATURATES})"
    if "avx_vnni" in have:
        return "AVX-VNNI (vpdpbusds: 32-bit sums, exact)"
    return f"AVX2, no VNNI ({_SATURATES})"


def float_kernel(features: Iterable[str] | None = None) -> str:
    """The MLAS float32 GEMM kernel the fp32 encoder runs on, given the CPU's ``features``."""
    have = set(cpu_features() if features is None else features)
    if not have:
        return "unknown (the CPU's features cannot be read here)"
    if "asimd" in have:
        return "ARM NEON"
    if {"avx2", "fma", "avx512f"} <= have:
        return "AVX-512F"
    if {"avx2", "fma"} <= have:
        return "FMA3 (AVX2)"
    return "AVX" if "avx" in have else "SSE"


@dataclass(frozen=True, slots=True)
class EncoderInfo:
    """What an encoder is: its identity, precision, version, how it batches texts, and the CPU kernel it runs on."""

    model_id: str
    """The identity its vectors are kept under (stores, snapshots, caches)."""
    model: str
    """The model (the packaged one's id, or ``<directory name>@<fingerprint prefix>``)."""
    precision: str
    """``"fp32"`` or ``"int8"``; ``""`` for an embedder that is not norma's encoder."""
    version: int | None
    """The encoder version (see :data:`ENCODER_VERSIONS`); None when unknown."""
    batch_independent: bool | None
    """Whether a text's vector is the same whatever else is embedded with it (fp32: to float rounding; int8: bit
    for bit); None when unknown."""
    batching: str
    """How texts reach the model."""
    kernel: str
    """The onnxruntime version and the CPU kernel of the encoder's matrix products."""
    cpu: tuple[str, ...] = ()
    """The CPU features that pick the kernel (:func:`cpu_features`)."""

    def describe(self) -> str:
        """One line: ``<model id>: int8, encoder version 2, <batching>; <kernel>``."""
        if not self.precision:
            return f"{self.model_id}: {self.batching}"
        return f"{self.model_id}: {self.precision}, encoder version {self.version}, {self.batching}; {self.kernel}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (every field, ``cpu`` a list) with ``description``: :meth:`describe`."""
        return {
            "model_id": self.model_id,
            "model": self.model,
            "precision": self.precision,
            "version": self.version,
            "batch_independent": self.batch_independent,
            "batching": self.batching,
            "kernel": self.kernel,
            "cpu": list(self.cpu),
            "description": self.describe(),
        }


def encoder_info(model: str, *, quantized: bool, batch_size: int) -> EncoderInfo:
    """The :class:`EncoderInfo` of norma's encoder of ``model`` (its id without a precision suffix)."""
    precision = "int8" if quantized else "fp32"
    features = cpu_features()
    if quantized:
        batching = "one text per forward pass, unpadded (batch-independent, bit for bit)"
        kernel = f"{_ort_version()}, int8 kernel: {int8_kernel(features)}"
    else:
        batching = (
            f"batches of up to {batch_size} texts padded to the longest (batch-independent to float rounding)"
            if batch_size > 1
            else "one text per forward pass (batch-independent)"
        )
        kernel = f"{_ort_version()}, float32 kernel: {float_kernel(features)}"
    return EncoderInfo(
        model_id=encoder_id(model, precision),
        model=model,
        precision=precision,
        version=ENCODER_VERSIONS[precision],
        batch_independent=True,
        batching=batching,
        kernel=kernel,
        cpu=features,
    )


def describe_encoder(embedder: Any) -> EncoderInfo:
    """The :class:`EncoderInfo` of any embedder: norma's own encoder (under any wrappers: caches, batching) knows
    itself; of another, only the model id is known."""
    seen = embedder
    for _ in range(16):  # wrappers keep what they wrap in `inner`
        found = getattr(seen, "encoder", None)
        if isinstance(found, EncoderInfo):
            return found
        seen = getattr(seen, "inner", None)
        if seen is None:
            break
    model_id = str(getattr(embedder, "model_id", "?"))
    return EncoderInfo(
        model_id=model_id,
        model=model_id,
        precision="",
        version=None,
        batch_independent=None,
        batching="not norma's encoder: precision, batching and kernel unknown",
        kernel="",
        cpu=cpu_features(),
    )
