"""An encoder's identity (model, precision, encoder version) and what it tells of itself: batching and CPU kernel."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import (
    DEFAULT_MODEL_ID,
    BatchingEmbedder,
    CachedEmbedder,
    EmbeddingCache,
    describe_encoder,
    encoder_for,
    get_embedder,
)
from norma.embeddings._identity import cpu_features, int8_kernel

pytestmark = [pytest.mark.model]


def test_fp32_keeps_its_id_and_int8_names_its_version() -> None:
    fp32, int8 = get_embedder(quantize=False), get_embedder(quantize=True)
    assert fp32.model_id == DEFAULT_MODEL_ID  # the id every store keeps its fp32 vectors under
    assert int8.model_id == f"{DEFAULT_MODEL_ID}#int8.2"  # never "#int8": version 1, whose vectors moved with batches
    for embedder, precision, version in ((fp32, "fp32", 1), (int8, "int8", 2)):
        info = embedder.encoder
        assert (info.model_id, info.model, info.precision, info.version) == (
            embedder.model_id, DEFAULT_MODEL_ID, precision, version
        )  # fmt: skip
        assert info.batch_independent is True
        assert info.cpu == cpu_features()
        assert info.to_dict()["description"] == info.describe()
    assert "one text per forward pass" in int8.encoder.describe()
    assert "bit for bit" in int8.encoder.describe()
    assert "int8 kernel: " + int8_kernel() in int8.encoder.kernel
    assert "batches of up to 32 texts" in fp32.encoder.describe()
    assert "float32 kernel" in fp32.encoder.kernel


def test_the_encoder_is_known_without_building_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert encoder_for(quantize=True) == get_embedder(quantize=True).encoder
    assert encoder_for(quantize=False) == get_embedder(quantize=False).encoder
    monkeypatch.setenv("NORMA_EMBEDDINGS_INT8", "1")  # the default follows $NORMA_EMBEDDINGS_INT8, as get_embedder
    assert encoder_for().precision == "int8"
    monkeypatch.delenv("NORMA_EMBEDDINGS_INT8")
    assert encoder_for().precision == "fp32"


class _Other:
    """An embedder that is not norma's (a user's own backend)."""

    model_id = "acme/embedder-v3"
    dim = 3

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)


def test_wrappers_tell_the_encoder_they_wrap(tmp_path: Path) -> None:
    int8 = get_embedder(quantize=True)
    cache = EmbeddingCache(path=tmp_path / "cache.db")
    try:
        wrapped = BatchingEmbedder(CachedEmbedder(int8, cache))
        assert describe_encoder(wrapped) == int8.encoder
    finally:
        cache.close()
    other = describe_encoder(BatchingEmbedder(_Other()))  # type: ignore[arg-type]
    assert (other.model_id, other.precision, other.version, other.batch_independent) == (
        "acme/embedder-v3", "", None, None
    )  # fmt: skip
    assert other.describe().startswith("acme/embedder-v3: not norma's encoder")


@pytest.mark.parametrize(
    ("features", "kernel"),
    [
        ({"sse4_1", "avx", "avx2", "fma"}, "AVX2, no VNNI (vpmaddubsw: u8 x s8 pairs summed in 16 bits, which can "
                                           "saturate)"),
        ({"avx", "avx2", "fma", "avx_vnni"}, "AVX-VNNI (vpdpbusds: 32-bit sums, exact)"),
        ({"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"}, "AVX-512, no VNNI (vpmaddubsw: u8 x s8 "
                                                                          "pairs summed in 16 bits, which can "
                                                                          "saturate)"),
        ({"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_vnni", "avx_vnni"},
         "AVX-512 VNNI (vpdpbusds: 32-bit sums, exact)"),
        ({"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_vnni", "amx_tile", "amx_int8"},
         "AMX int8 tiles (exact; where the OS grants AMX, else AVX-512 VNNI)"),
        ({"avx2", "fma", "avx512f", "avx_vnni"}, "AVX-VNNI (vpdpbusds: 32-bit sums, exact)"),  # AVX-512F alone: no
        ({"sse4_1", "avx"}, "SSE (no AVX2)"),
        ({"asimd", "asimddp"}, "ARM NEON dot product (udot, exact)"),
        (set(), "unknown (the CPU's features cannot be read here)"),
    ],
)  # fmt: skip
def test_the_int8_kernel_is_the_one_onnxruntime_picks(features: set[str], kernel: str) -> None:
    assert int8_kernel(features) == kernel


def test_this_cpus_kernel() -> None:
    features = set(cpu_features())
    if not features:
        pytest.skip("no /proc/cpuinfo here")
    kernel = int8_kernel()
    vnni = bool({"avx512_vnni", "avx_vnni", "amx_int8", "asimddp"} & features)
    assert ("can saturate" in kernel) == (not vnni and "avx2" in features)
