"""Fixtures for the embeddings tests: the real model, its reference vectors, and damaged copies of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import BertEmbedder, get_embedder
from norma.embeddings._model_files import find_model_dir

DATA = Path(__file__).parent / "data"
BENCH_DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


@pytest.fixture(scope="session")
def model_dir() -> Path:
    directory, _ = find_model_dir()
    return directory


@pytest.fixture(scope="session")
def embedder() -> BertEmbedder:
    """The process-wide fp32 embedder (default model)."""
    return get_embedder(quantize=False)


@pytest.fixture(scope="session")
def reference() -> tuple[list[str], np.ndarray]:
    """The test sentences and sentence-transformers' vectors for them (scripts/make_reference_vectors.py)."""
    sentences = json.loads((DATA / "sentences.json").read_text(encoding="utf-8"))["sentences"]
    stored = np.load(DATA / "reference.npz")
    assert list(stored["texts"]) == sentences, "reference.npz and sentences.json disagree: rerun the script"
    return sentences, stored["vectors"]


@pytest.fixture(scope="session")
def message_reference() -> tuple[list[str], np.ndarray]:
    """The 200 benchmark messages and sentence-transformers' vectors for them."""
    stored = np.load(BENCH_DATA / "messages_reference.npz")
    messages = (BENCH_DATA / "messages.txt").read_text(encoding="utf-8").splitlines()
    assert list(stored["texts"]) == messages
    return messages, stored["vectors"]


@pytest.fixture
def model_copy(model_dir: Path, tmp_path: Path) -> Path:
    """A writable copy of the model directory (weights symlinked: replace the link to damage them)."""
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy, ignore=shutil.ignore_patterns("model.safetensors", "README.md"))
    (copy / "model.safetensors").symlink_to(model_dir / "model.safetensors")
    return copy
