"""The int8 variant of the encoder: dynamic quantisation at first use, cached on disk.

onnxruntime's dynamic quantisation turns the weights of every matrix multiply (and the attention blocks' QKV
projection) into int8 with one scale per output channel; activations are quantised on the fly, one scale per tensor,
which is why :class:`~norma.embeddings.BertEmbedder` runs every text through it alone. The result is written once to
the cache folder — ``$NORMA_CACHE_DIR``, else ``$XDG_CACHE_HOME/norma``, else ``~/.cache/norma`` — under a name made
of the model's fingerprint, the graph builder's version, norma's version and onnxruntime's version, so a change in
any of them quantises again. The file is written to a temporary name in the same folder and renamed, so a reader
never sees half a file; a cached file onnxruntime cannot load is rebuilt.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from norma._version import __version__

if TYPE_CHECKING:
    from norma.embeddings._graph import EncoderGraph
    from norma.embeddings._model_files import ModelFiles
from norma._cache import CACHE_DIR_ENV, cache_dir
from norma.errors import BackendError, ConfigError

__all__ = [
    "CACHE_DIR_ENV",
    "INT8_ENV",
    "cache_dir",
    "cached_fp32_model",
    "cached_quantized_model",
    "int8_from_env",
    "quantized_model",
    "save_fp32_model",
]

INT8_ENV = "NORMA_EMBEDDINGS_INT8"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


def int8_from_env() -> bool:
    """Whether ``$NORMA_EMBEDDINGS_INT8`` asks for the int8 encoder."""
    raw = os.environ.get(INT8_ENV, "").strip().lower()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ConfigError(f"{INT8_ENV} must be 1/0, true/false, yes/no or on/off, not {raw!r}", source=INT8_ENV)


def _cache_path(files: ModelFiles, variant: str = "int8") -> Path:
    from importlib.metadata import version  # not `import onnxruntime`: the session loads it in the background

    from norma.embeddings._model_files import GRAPH_VERSION

    name = (
        f"encoder-{files.fingerprint[:24]}-g{GRAPH_VERSION}-norma{__version__}-ort{version('onnxruntime')}-"
        f"{variant}.onnx"
    )
    return cache_dir() / "embeddings" / name


def cached_fp32_model(files: ModelFiles) -> Path | None:
    """The fp32 encoder of ``files`` built and saved by an earlier process (loading it skips the graph build and
    ``import onnx``: about 0.1 s of every start), if there is one."""
    target = _cache_path(files, "fp32")
    return target if target.is_file() else None


def save_fp32_model(files: ModelFiles, graph: EncoderGraph) -> Path | None:
    """Save the built fp32 encoder (weights inlined) for the next processes; None when the cache cannot be
    written (a cache that cannot be written only costs time)."""
    import onnx

    target = _cache_path(files, "fp32")
    temporary = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".saving-", suffix=".onnx", dir=target.parent)
        os.close(fd)
        onnx.save(graph.inlined(), temporary)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
        return target
    except (OSError, ValueError):
        return None
    finally:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)


def cached_quantized_model(files: ModelFiles) -> Path | None:
    """The cached int8 model for ``files``, if there is one."""
    target = _cache_path(files)
    return target if target.is_file() else None


def quantized_model(files: ModelFiles, graph: EncoderGraph) -> Path:
    """Quantise ``graph`` (the fp32 encoder of ``files``) and cache the result; returns the cached file."""
    target = _cache_path(files)
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the cache folder: {exc}", source=str(target.parent), hint=f"set {CACHE_DIR_ENV}"
        ) from exc
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)  # the quantiser logs advice about pre-processing we do not need
    fd, temporary = tempfile.mkstemp(prefix=".quantizing-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    try:
        quantize_dynamic(
            graph.inlined(),
            temporary,
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Attention", "Gather"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except Exception as exc:  # the quantiser raises whatever onnx or numpy raise
        raise BackendError(
            f"int8 quantisation failed: {exc}", source=str(files.weights_path), hint="use the fp32 encoder"
        ) from exc
    finally:
        logging.disable(previous)
        if os.path.exists(temporary):
            os.unlink(temporary)
    return target
