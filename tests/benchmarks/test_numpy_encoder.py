"""The numpy reference of benchmarks/_numpy_encoder.py (issue #58's "plain numpy implementation of the same model",
which embeddings_bench.py times norma against) computes the same vectors as norma's fp32 encoder, so it cannot
drift into timing another model: same token counts, min cosine >= 0.9999 in a batch and alone, and an erf within
1e-7 of ``math.erf``."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from norma.embeddings import get_embedder

pytestmark = pytest.mark.model

MODULE = Path(__file__).resolve().parents[2] / "benchmarks" / "_numpy_encoder.py"
TEXTS = [
    "Has my top up been reverted?",
    "",
    "?",
    "card",
    "  I was charged twice for the same coffee, can you refund one of the payments please?  ",
    "¿Por qué me cobraron una comisión al retirar dinero del cajero en el extranjero?",
    "My card 🙂 arrived but the app\tsays it is still on its way.",
    "how do I change my PIN",
    "I would appreciate that someone let me know when there is an extra charge for payments. " * 3,
]
LONG = "transfer " * 300  # truncated to the window, 256 tokens: embedded alone (a batch would pad all to 256)


@pytest.fixture(scope="module")
def module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_numpy_encoder", MODULE)
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


@pytest.fixture(scope="module")
def encoder(module: ModuleType) -> Any:
    return module.NumpyEncoder()


def test_the_reference_sees_the_tokens_norma_sees(encoder: Any) -> None:
    counts = [len(ids) for ids in encoder.token_ids([*TEXTS, LONG])]
    assert counts == get_embedder(quantize=False).token_counts([*TEXTS, LONG])
    assert max(counts) == 256
    assert min(counts) == 2


def test_the_reference_agrees_with_the_fp32_encoder_in_a_batch_and_alone(encoder: Any) -> None:
    norma = get_embedder(quantize=False)
    batched = encoder.embed(TEXTS)
    alone = np.vstack([encoder.embed([text]) for text in [*TEXTS, LONG]])
    for vectors, expected in ((batched, norma.embed(TEXTS)), (alone, norma.embed([*TEXTS, LONG]))):
        assert vectors.shape == expected.shape
        assert vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
        assert (vectors * expected).sum(axis=1).min() >= 0.9999


def test_the_numpy_erf_is_within_1e_7(module: ModuleType) -> None:
    x = np.concatenate([np.linspace(-7, 7, 200_001), [0.0, -0.0, 1e-30, -1e-30, 40.0, -40.0]]).astype(np.float32)
    exact = np.array([math.erf(float(v)) for v in x])
    got = module.erf(x)
    assert got.dtype == np.float32
    assert np.abs(got - exact).max() < 1e-7
