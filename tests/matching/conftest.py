"""Fixtures for the matcher tests: a tiny deterministic embedder (a test double of the Embedder protocol, for
arithmetic fixtures whose expected values are computed by hand), rule factories, and for the snapshot tests a real
embedder that counts what it embeds, a fresh cache folder and a copy of the banking rulebook."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import Embedder, EmbedderWrapper, get_embedder
from tests.conftest import EXAMPLES

AXES = ("refund", "card", "hello", "weather", "delivery")


class AxisEmbedder:
    """Maps a text to a fixed vector: one axis per keyword of AXES it contains (+ a 6th "other" axis), normalised.

    A text with exactly one keyword gets that axis' unit vector, so cosines are 0 or 1 or simple fractions that
    can be computed by hand (two keywords: 1/sqrt(2)).
    """

    model_id = "test/axis"
    dim = len(AXES) + 1

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = text.lower()
            for j, axis in enumerate(AXES):
                if axis in words:
                    out[i, j] = 1.0
            if not out[i].any():
                out[i, -1] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def axis() -> AxisEmbedder:
    return AxisEmbedder()


class Counting(EmbedderWrapper):
    """A real embedder (the default one unless given), counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder | None = None) -> None:
        super().__init__(inner if inner is not None else get_embedder())
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$NORMA_CACHE_DIR`` (snapshots and the embedding cache)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("NORMA_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def book(tmp_path: Path) -> Path:
    """A copy of the example banking rulebook, free to edit."""
    path = tmp_path / "book.yaml"
    shutil.copyfile(EXAMPLES / "rulebooks" / "banking-support.yaml", path)
    return path
