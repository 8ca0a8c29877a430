"""``norma embed`` and the embeddings section of ``norma demo``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from norma.cli._demo import SECTIONS
from norma.embeddings import BertEmbedder
from tests.conftest import CliResult

pytestmark = pytest.mark.model

Run = Callable[..., CliResult]


def test_embed_json_full_vectors_match_the_library(run_cli: Run, embedder: BertEmbedder) -> None:
    result = run_cli("embed", "--full", "--fp32", "--format", "json", "hello world", "¿Dónde está mi tarjeta?")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert payload["dim"] == 384
    vectors = np.array([item["vector"] for item in payload["vectors"]], dtype=np.float32)
    assert vectors.shape == (2, 384)
    assert np.abs(vectors - embedder.embed(["hello world", "¿Dónde está mi tarjeta?"])).max() < 1e-6


def test_embed_table_shows_a_preview(run_cli: Run) -> None:
    result = run_cli("embed", "--fp32", "refund my order")
    assert result.code == 0, result.err
    assert "dim 384" in result.out
    assert "first 6 of 384" in result.out
    assert "refund my order" in result.out


def test_embed_needs_a_text(run_cli: Run) -> None:
    result = run_cli("embed")
    assert result.code == 2


def test_embed_with_a_broken_model_dir_is_one_line_and_exit_2(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{")
    result = run_cli("embed", "--model-dir", str(tmp_path), "hi")
    assert result.code == 2
    assert result.err.startswith("norma: error: ")
    assert "config.json" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_demo_section_finds_the_paraphrases(examples_dir: Path) -> None:
    section, render = SECTIONS["embeddings"](examples_dir)
    assert section["sentences"] == 10
    best = section["nearest_pairs"][0]
    assert {best["a"], best["b"]} == {"How do I reset the PIN of my card?", "I forgot my card PIN and need a new one."}
    assert 0.5 < best["cosine"] <= 1.0
    console = Console(record=True, width=200)
    render(console)
    assert "the five most similar pairs" in console.export_text()
