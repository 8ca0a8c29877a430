"""The int8 scan of many rule vectors as one prepacked integer matrix product (onnxruntime ``MatMulInteger``).

simsimd's ``cdist`` computes one dot product per call of its kernel, about 15-25 ns per 384-dim row here; MLAS's
integer GEMM behind onnxruntime's ``MatMulInteger`` works on the rule matrix packed once for it, about 7 ns per row
while the matrix fits the CPU's last-level cache (10k rules), the same as simsimd once it does not (100k rules: both
are memory bound).

Both operands are unsigned: ``(q8 + 128 - 128) . (r8 + 128 - 128)``, the zero points 128 taking the shifts back out,
summed in int32. The product is exact on every CPU that way. An unsigned-by-signed product (``R`` int8) is what
MLAS computes fastest, but on x86 CPUs without VNNI (AVX2, AVX-512 without VNNI) its kernel adds each pair of
``uint8 x int8`` products into a 16-bit lane with saturation (``vpmaddubsw``): two products of 255 x 127 leave it, and
the scan's bounds broke (issue #46; reproduced under ``qemu-x86_64 -cpu Haswell``, which a test runs). MLAS's
``uint8 x uint8`` kernels widen to 16 bits and sum pairs in 32 (``vpmaddwd``) or use VNNI: exact. Measured side by
side on an AVX-512 VNNI machine, one 384-dim query: 0.19 ms against 0.19 ms at 10k rows, 2.29 against 1.95 ms at
100k (docs/benchmarks.md).

A :class:`PackedRows` covers the int8 rows of a :class:`~norma.matching._vectors.VectorIndex` as they were when it
was built; the index scans rows added later with simsimd and rebuilds the pack when they become many.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PackedRows", "cpu_flags", "model_bytes", "scan_kernel"]

_IN_MEMORY = "norma-packed-rows"
_ZERO_POINT = 128
_UINT8, _INT32 = 2, 6  # onnx.TensorProto data types
_EXTERNAL = 1  # onnx.TensorProto.EXTERNAL


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _str(field: int, text: str) -> bytes:
    return _bytes(field, text.encode())


def _value_info(name: str, elem_type: int, dims: list[str | int]) -> bytes:
    shape = b"".join(_bytes(1, _str(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _str(1, name) + _bytes(2, _bytes(1, _int(1, elem_type) + _bytes(2, shape)))


def model_bytes(dim: int, count: int) -> bytes:
    """The serialised ONNX model of the scan: ``S = MatMulInteger(Q, R, Z, Z)`` with ``Q`` uint8 ``(windows, dim)``,
    ``R`` the uint8 ``(dim, count)`` matrix (an external initializer, given in memory) and ``Z`` the zero point 128
    of both.

    Encoded here, field by field as ``onnx`` writes it (a test compares the bytes): importing ``onnx`` to build five
    messages costs a CLI match some 30 ms.
    """
    node = _str(1, "Q") + _str(1, "R") + _str(1, "Z") + _str(1, "Z") + _str(2, "S") + _str(4, "MatMulInteger")
    location = _str(1, "location") + _str(2, _IN_MEMORY)
    matrix = _int(1, dim) + _int(1, count) + _int(2, _UINT8) + _str(8, "R") + _bytes(13, location)
    matrix += _int(14, _EXTERNAL)
    zero = _int(2, _UINT8) + _bytes(5, _varint(_ZERO_POINT)) + _str(8, "Z")
    graph = _bytes(1, node) + _str(2, "norma-int8-scan") + _bytes(5, matrix) + _bytes(5, zero)
    graph += _bytes(11, _value_info("Q", _UINT8, ["windows", dim]))
    graph += _bytes(12, _value_info("S", _INT32, ["windows", count]))
    return _int(1, 9) + _bytes(7, graph) + _bytes(8, _str(1, "") + _int(2, 13))  # ir_version 9, opset 13


class PackedRows:
    """An onnxruntime session multiplying int8 queries by a fixed int8 matrix ``rows`` (one thread), exactly.

    Raises whatever onnxruntime raises if the session cannot be built; callers fall back to simsimd.
    """

    def __init__(self, rows: np.ndarray) -> None:
        import onnxruntime as ort

        count, dim = rows.shape
        self.rows = count
        # (dim, count), shifted to uint8: kept alive, onnxruntime reads it at start-up
        self._matrix = np.ascontiguousarray((rows.T.astype(np.int16) + _ZERO_POINT).astype(np.uint8))
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one thread per match, like every other part of the matcher
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        self._value: Any = ort.OrtValue.ortvalue_from_numpy(self._matrix)
        options.add_external_initializers(["R"], [self._value])
        self._session: Any = ort.InferenceSession(model_bytes(dim, count), options, providers=["CPUExecutionProvider"])

    def dots(self, queries: np.ndarray) -> np.ndarray:
        """Exact integer dot products ``queries @ rows.T`` (int32, shape ``(len(queries), rows)``) of int8
        ``queries`` (levels in [-127, 127])."""
        shifted = (queries.astype(np.int16) + _ZERO_POINT).astype(np.uint8)
        out: np.ndarray = self._session.run(None, {"Q": shifted})[0]
        return out


SCAN_KERNEL = "onnxruntime MatMulInteger, uint8 x uint8 (exact on every CPU)"
"""What computes the int8 scan's products from ``_PACKED_MIN_ROWS`` vectors on (below: simsimd's int8 dot)."""

_FLAGS_OF_NOTE = ("avx2", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "sve")


def cpu_flags() -> tuple[str, ...]:
    """The CPU features that decide which integer kernels run (from /proc/cpuinfo, as the embeddings read them;
    empty where it cannot be read)."""
    from norma.embeddings import cpu_features

    have = set(cpu_features())
    return tuple(flag for flag in _FLAGS_OF_NOTE if flag in have)


def scan_kernel() -> str:
    """One line for a doctor or a benchmark's machine line: the packed scan's kernel and the CPU's features."""
    flags = cpu_flags()
    return f"{SCAN_KERNEL}; CPU: {' '.join(flags) if flags else 'features unknown'}"
