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
from tests.conftest import EXAMPLES, CliResult

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


def test_model_dir_reaches_every_embedder_of_match_and_never_the_environment(
    run_cli: Run, model_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--model-dir`` is handed to the embedders the command builds, one message or ``--batch`` (whose workers
    build their own); the environment is left as it was."""
    import os

    import norma.batch._match as batch_match
    from norma.embeddings import MODEL_DIR_ENV, get_embedder
    from norma.embeddings._bert import _SHARED

    monkeypatch.delenv(MODEL_DIR_ENV, raising=False)
    rules = str(EXAMPLES / "matching" / "support_rules.yaml")
    folder = str(model_copy.resolve())
    one = run_cli("match", "--rules", rules, "--model-dir", str(model_copy), "--format", "json", "my card was stolen")
    assert one.code == 0, one.err
    assert json.loads(one.out)["matches"], one.out
    assert (folder, False) in _SHARED  # the copy's encoder was built for it (the packaged one is another key)
    built: list[object] = []

    def recorded(model_dir: str | None = None, **options: object) -> BertEmbedder:
        built.append(model_dir)
        return get_embedder(model_dir, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_match, "get_embedder", recorded)
    messages = tmp_path / "messages.jsonl"
    messages.write_text('{"message": "my card was stolen"}\n', encoding="utf-8")
    args = ["match", "--rules", rules, "--batch", str(messages), "--engine", "local", "--format", "jsonl"]
    batch = run_cli(*args, "--model-dir", str(model_copy))
    assert batch.code == 0, batch.err
    assert built == [folder]
    assert MODEL_DIR_ENV not in os.environ


def test_a_process_that_ends_while_the_encoder_loads_exits_normally(embedder: BertEmbedder) -> None:
    """The encoder file is cached (``embedder`` built it): a new embedder loads it in the background, and a process
    that ends meanwhile exits with its own code, not aborted inside onnxruntime (134, "terminate called")."""
    import subprocess
    import sys

    code = "from norma.embeddings import BertEmbedder; BertEmbedder(quantize=False); raise SystemExit(3)"
    for _ in range(3):
        ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
        assert (ended.returncode, ended.stderr) == (3, "")


def test_demo_section_finds_the_paraphrases(examples_dir: Path) -> None:
    section, render = SECTIONS["embeddings"](examples_dir)
    assert section["sentences"] == 10
    best = section["nearest_pairs"][0]
    assert {best["a"], best["b"]} == {"How do I reset the PIN of my card?", "I forgot my card PIN and need a new one."}
    assert 0.5 < best["cosine"] <= 1.0
    console = Console(record=True, width=200)
    render(console)
    assert "the five most similar pairs" in console.export_text()
