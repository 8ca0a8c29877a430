"""The int8 scan of many rule vectors as one prepacked integer matrix product (onnxruntime ``MatMulInteger``).

simsimd's ``cdist`` computes one dot product per call of its kernel, about 15-25 ns per 384-dim row here; MLAS's
integer GEMM behind onnxruntime's ``MatMulInteger`` works on the rule matrix packed once for it, about 7 ns per row
while the matrix fits the CPU's last-level cache (10k rules), the same as simsimd once it does not (100k rules: both
are memory bound). The product is exact: ``(q8 + 128 - 128) . r8`` summed in int32 (``a_zero_point`` 128 turns the
query's int8 levels into the uint8 operand MLAS wants).

A :class:`PackedRows` covers the int8 rows of a :class:`~norma.matching._vectors.VectorIndex` as they were when it
was built; the index scans rows added later with simsimd and rebuilds the pack when they become many.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PackedRows"]

_IN_MEMORY = "norma-packed-rows"
_ZERO_POINT = 128


class PackedRows:
    """An onnxruntime session multiplying int8 queries by a fixed int8 matrix ``rows`` (one thread).

    Raises whatever onnxruntime raises if the session cannot be built; callers fall back to simsimd.
    """

    def __init__(self, rows: np.ndarray) -> None:
        import onnxruntime as ort
        from onnx import TensorProto, helper

        count, dim = rows.shape
        self.rows = count
        self._matrix = np.ascontiguousarray(rows.T)  # (dim, count): kept alive, onnxruntime reads it at start-up
        matrix = TensorProto(name="R", data_type=TensorProto.INT8, dims=[dim, count])
        matrix.data_location = TensorProto.EXTERNAL
        entry = matrix.external_data.add()
        entry.key, entry.value = "location", _IN_MEMORY
        zero = helper.make_tensor("Z", TensorProto.UINT8, [], [_ZERO_POINT])
        graph = helper.make_graph(
            [helper.make_node("MatMulInteger", ["Q", "R", "Z"], ["S"])],
            "norma-int8-scan",
            [helper.make_tensor_value_info("Q", TensorProto.UINT8, ["windows", dim])],
            [helper.make_tensor_value_info("S", TensorProto.INT32, ["windows", count])],
            initializer=[matrix, zero],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 9
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one thread per match, like every other part of the matcher
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        self._value: Any = ort.OrtValue.ortvalue_from_numpy(self._matrix)
        options.add_external_initializers(["R"], [self._value])
        self._session: Any = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )

    def dots(self, queries: np.ndarray) -> np.ndarray:
        """Exact integer dot products ``queries @ rows.T`` (int32, shape ``(len(queries), rows)``) of int8
        ``queries`` (levels in [-127, 127])."""
        shifted = (queries.astype(np.int16) + _ZERO_POINT).astype(np.uint8)
        out: np.ndarray = self._session.run(None, {"Q": shifted})[0]
        return out
