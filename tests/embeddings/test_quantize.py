"""The int8 encoder: agreement with sentence-transformers, and its on-disk cache."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import BertEmbedder
from norma.errors import ConfigError

pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("norma-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NORMA_CACHE_DIR", str(root))
        yield root


@pytest.fixture(scope="module")
def int8(cache_root: Path) -> BertEmbedder:
    return BertEmbedder(quantize=True)


def _cached_files(root: Path) -> list[Path]:
    return sorted((root / "embeddings").glob("*.onnx"))


def test_int8_agrees_with_sentence_transformers_on_real_messages(
    int8: BertEmbedder, message_reference: tuple[list[str], np.ndarray]
) -> None:
    messages, expected = message_reference
    cosine = (int8.embed(messages) * expected).sum(axis=1)
    assert cosine.min() >= 0.98
    assert cosine.mean() >= 0.99


def test_int8_stays_close_on_edge_cases(int8: BertEmbedder, reference: tuple[list[str], np.ndarray]) -> None:
    sentences, expected = reference
    vectors = int8.embed(sentences)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = (vectors * expected).sum(axis=1)
    # Punctuation-only and empty texts are the worst (about 0.97); see docs/design/030-embeddings.md.
    assert cosine.min() >= 0.95
    assert cosine.mean() >= 0.98


def test_int8_identity(int8: BertEmbedder) -> None:
    assert int8.quantized
    assert int8.model_id == "sentence-transformers/all-MiniLM-L6-v2#int8.2"  # int8, encoder version 2
    assert int8.dim == 384


def test_the_quantised_model_is_cached_and_reused(int8: BertEmbedder, cache_root: Path) -> None:
    (cached,) = _cached_files(cache_root)
    assert "norma" in cached.name
    assert not [p for p in cached.parent.iterdir() if p.name.startswith(".quantizing-")]
    before = cached.stat().st_mtime_ns
    again = BertEmbedder(quantize=True)
    assert cached.stat().st_mtime_ns == before
    assert np.abs(again.embed(["hello there"]) - int8.embed(["hello there"])).max() < 1e-6


def test_a_damaged_cached_model_is_rebuilt(int8: BertEmbedder, cache_root: Path) -> None:
    (cached,) = _cached_files(cache_root)
    cached.write_bytes(b"not an onnx model")
    rebuilt = BertEmbedder(quantize=True)  # loads the cached file in the background: its first use waits for it
    assert np.abs(rebuilt.embed(["hello there"]) - int8.embed(["hello there"])).max() < 1e-6
    assert cached.stat().st_size > 1_000_000


def test_the_environment_switch(cache_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_EMBEDDINGS_INT8", "1")
    assert BertEmbedder().quantized
    monkeypatch.setenv("NORMA_EMBEDDINGS_INT8", "maybe")
    with pytest.raises(ConfigError, match="NORMA_EMBEDDINGS_INT8"):
        BertEmbedder()
    assert os.environ["NORMA_CACHE_DIR"] == str(cache_root)
