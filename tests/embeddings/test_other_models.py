"""Any sentence-transformers BERT directory works: a small random BERT checked against a plain numpy forward pass."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from norma.embeddings import BertEmbedder
from norma.embeddings._graph import build_graph
from norma.embeddings._model_files import load_model_files, read_weights
from norma.embeddings._session import create_session
from norma.embeddings._tokenize import WordPieces

CONFIG = {
    "model_type": "bert",
    "hidden_act": "gelu",
    "vocab_size": 30522,
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 96,
    "max_position_embeddings": 40,
    "type_vocab_size": 2,
    "layer_norm_eps": 1e-12,
}
WINDOW = 24


def _random_weights(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    d, f = CONFIG["hidden_size"], CONFIG["intermediate_size"]

    def normal(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.3, shape).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": normal(CONFIG["vocab_size"], d),
        "embeddings.position_embeddings.weight": normal(CONFIG["max_position_embeddings"], d),
        "embeddings.token_type_embeddings.weight": normal(2, d),
        "embeddings.LayerNorm.weight": 1 + normal(d),
        "embeddings.LayerNorm.bias": normal(d),
    }
    for i in range(CONFIG["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            w[f"{p}attention.self.{name}.weight"], w[f"{p}attention.self.{name}.bias"] = normal(d, d), normal(d)
        w[f"{p}attention.output.dense.weight"], w[f"{p}attention.output.dense.bias"] = normal(d, d), normal(d)
        w[f"{p}intermediate.dense.weight"], w[f"{p}intermediate.dense.bias"] = normal(f, d), normal(f)
        w[f"{p}output.dense.weight"], w[f"{p}output.dense.bias"] = normal(d, f), normal(d)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[f"{p}{ln}.weight"], w[f"{p}{ln}.bias"] = 1 + normal(d), normal(d)
    return w


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(-1, keepdims=True)
    return (x64 - mean) / np.sqrt(var + CONFIG["layer_norm_eps"]) * gamma + beta


def _reference(ids: list[int], w: dict[str, np.ndarray]) -> np.ndarray:
    """The BERT encoder + mean pooling + L2 norm for one unpadded text, written out plainly in float64."""
    heads = CONFIG["num_attention_heads"]
    size = CONFIG["hidden_size"] // heads
    n = len(ids)
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][:n]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    erf = np.vectorize(math.erf)
    for i in range(CONFIG["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def dense(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
            return v @ w[f"{p}{name}.weight"].T.astype(np.float64) + w[f"{p}{name}.bias"]

        q, k, v = (dense(x, f"attention.self.{name}").reshape(n, heads, size) for name in ("query", "key", "value"))
        scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(size)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = np.einsum("hqk,khd->qhd", probs, v).reshape(n, -1)
        x = _layer_norm(x + dense(context, "attention.output.dense"), *_ln(w, f"{p}attention.output.LayerNorm"))
        h = dense(x, "intermediate.dense")
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        x = _layer_norm(x + dense(h, "output.dense"), *_ln(w, f"{p}output.LayerNorm"))
    mean = x.mean(0)
    return mean / np.linalg.norm(mean)


def _ln(w: dict[str, np.ndarray], name: str) -> tuple[np.ndarray, np.ndarray]:
    return w[f"{name}.weight"], w[f"{name}.bias"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> tuple[Path, dict[str, np.ndarray]]:
    directory = tmp_path_factory.mktemp("tiny-bert")
    weights = _random_weights(seed=5)
    save_file({f"bert.{k}": v for k, v in weights.items()}, str(directory / "model.safetensors"))
    (directory / "config.json").write_text(json.dumps(CONFIG))
    (directory / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": WINDOW}))
    shutil.copy(model_dir / "tokenizer.json", directory / "tokenizer.json")
    return directory, weights


TEXTS = ["hello", "", "a much longer sentence that goes past the tiny window of twenty-four tokens " * 3, "¿qué?"]


def _expected(directory: Path, weights: dict[str, np.ndarray]) -> np.ndarray:
    ids = WordPieces(directory / "tokenizer.json", WINDOW).encode(TEXTS)
    assert [len(row) for row in ids][2] == WINDOW
    return np.vstack([_reference(row, weights) for row in ids])


@pytest.mark.model
def test_a_different_bert_matches_a_numpy_forward_pass(
    tiny_model: tuple[Path, dict[str, np.ndarray]], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory, weights = tiny_model
    monkeypatch.setenv("NORMA_MODEL_DIR", str(directory))
    embedder = BertEmbedder(batch_size=3)
    assert embedder.dim == 64
    assert embedder.max_seq_length == WINDOW
    assert embedder.model_id.startswith(f"{directory.name}@")
    assert embedder.token_counts(TEXTS)[2] == WINDOW
    assert np.abs(embedder.embed(TEXTS) - _expected(directory, weights)).max() < 1e-4


@pytest.mark.model
def test_the_standard_operator_graph_matches_too(tiny_model: tuple[Path, dict[str, np.ndarray]]) -> None:
    directory, weights = tiny_model
    files = load_model_files(directory)
    graph = build_graph(files.config, read_weights(files), fused=False)
    session = create_session(graph.model.SerializeToString(), external=graph.external, source="test")
    vectors = np.empty((len(TEXTS), 64), dtype=np.float32)
    for batch in WordPieces(files.tokenizer_path, files.max_seq_length).batches(TEXTS, 3):
        vectors[batch.positions] = session.run(batch.input_ids, batch.attention_mask)
    assert np.abs(vectors - _expected(directory, weights)).max() < 1e-4
