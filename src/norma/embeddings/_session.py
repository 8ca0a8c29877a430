"""onnxruntime session creation: options tuned for small CPU boxes, every failure turned into a NormaError."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from norma.errors import BackendError, ConfigError

__all__ = ["THREADS_ENV", "EncoderSession", "create_session", "default_threads"]

THREADS_ENV = "NORMA_EMBEDDINGS_THREADS"


def default_threads() -> int:
    """Intra-op threads: ``$NORMA_EMBEDDINGS_THREADS``, else every core this process may use (at most 8)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < 1:
            raise ConfigError(f"{THREADS_ENV} must be a positive integer, not {raw!r}", source=THREADS_ENV)
        return int(raw)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


class EncoderSession:
    """An onnxruntime session and the in-memory weights it reads (kept alive as long as it is)."""

    def __init__(self, session: Any, keep_alive: list[Any]) -> None:
        self._session = session
        self._keep_alive = keep_alive

    def run(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """The encoder's output for one padded batch (``InferenceSession.run`` is thread-safe)."""
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        try:
            (output,) = self._session.run(None, feeds)
        except Exception as exc:  # onnxruntime raises its own pybind11 error types
            raise BackendError(f"onnxruntime failed to run the encoder: {exc}") from exc
        return np.asarray(output, dtype=np.float32)


def create_session(
    model: bytes | Path, *, external: Mapping[str, np.ndarray] | None = None, threads: int | None = None, source: str
) -> EncoderSession:
    """An onnxruntime CPU session for a serialised model or a model file.

    ``external`` supplies the data of initializers the model names as external, from memory. Options: one
    inter-op thread, ``threads`` intra-op threads, sequential execution, every graph optimisation (fuses
    LayerNorm + residual, bias + GELU, and pre-packs the weights).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or default_threads()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    values = []
    if external:
        names = list(external)
        values = [ort.OrtValue.ortvalue_from_numpy(external[name]) for name in names]
        options.add_external_initializers(names, values)
    try:
        payload = str(model) if isinstance(model, Path) else model
        session = ort.InferenceSession(payload, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own pybind11 error types
        raise BackendError(
            f"onnxruntime cannot load the encoder: {exc}", source=source, hint="reinstall the model files"
        ) from exc
    return EncoderSession(session, [external, values])
