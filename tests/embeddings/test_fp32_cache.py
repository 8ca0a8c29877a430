"""The built fp32 encoder kept on disk: the next process loads it instead of building the graph again, and embeds
bit for bit the same; a damaged file is rebuilt."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import hashlib, sys, time
from norma.embeddings import get_embedder
vectors = get_embedder(quantize=False).embed(["hello world", "the customer lost their card", "¿dónde está?"])
print(hashlib.sha256(vectors.tobytes()).hexdigest())
print("onnx" in sys.modules)
"""


def _run(cache: Path) -> tuple[str, bool]:
    env = {**os.environ, "NORMA_CACHE_DIR": str(cache)}
    env.pop("NORMA_EMBEDDINGS_INT8", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True)
    digest, imported_onnx = out.stdout.split()
    return digest, imported_onnx == "True"


def test_the_next_process_loads_the_saved_encoder_and_embeds_the_same(tmp_path: Path) -> None:
    first, built = _run(tmp_path)
    (saved,) = (tmp_path / "embeddings").glob("encoder-*-fp32.onnx")
    assert built  # the first process built the graph (with onnx) and saved it
    second, built_again = _run(tmp_path)
    assert not built_again  # loaded from the file: onnx (the graph builder) is never imported
    assert second == first
    # a damaged file is not trusted: the encoder is built again, the same, and the file replaced
    saved.write_bytes(b"not a model")
    third, rebuilt = _run(tmp_path)
    assert rebuilt
    assert third == first
    assert hashlib.sha256(saved.read_bytes()).hexdigest() != hashlib.sha256(b"not a model").hexdigest()


def test_an_unwritable_cache_only_costs_time(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("", encoding="utf-8")  # the cache folder cannot be created below a file
    digest, built = _run(blocked)
    assert built
    assert len(digest) == 64
