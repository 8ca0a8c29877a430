"""The Embedder contract: shapes, dtype, unit length, order, batching, threads and the shared instance."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from norma.embeddings import BertEmbedder, CachedEmbedder, Embedder, get_embedder
from norma.errors import InvalidInputError

pytestmark = pytest.mark.model


def test_default_backend_and_cache_wrapper_follow_the_protocol(embedder: BertEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(CachedEmbedder(embedder), Embedder)


def test_shapes_dtype_and_unit_length(embedder: BertEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence about refunds", "", "🙂", "ÁÉÍÓÚ ñ"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (5, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.isfinite(vectors).all()


def test_no_texts_give_an_empty_matrix(embedder: BertEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_a_bare_string_is_refused(embedder: BertEmbedder) -> None:
    with pytest.raises(InvalidInputError, match="wrap the text in a list"):
        embedder.embed("hello")
    with pytest.raises(InvalidInputError, match=r"texts\[1\]"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]


def test_text_that_is_not_unicode_is_refused(embedder: BertEmbedder) -> None:
    """A lone surrogate reached the Rust tokenizer, which raised a TypeError (issue 23, item 2)."""
    with pytest.raises(InvalidInputError, match=r"texts\[1\]: text 1 is not valid Unicode"):
        embedder.embed(["ok", "x\ud800"])
    assert embedder.embed(["\U0001f600 ok"]).shape == (1, 384)


def test_similar_texts_are_closer_than_unrelated_ones(embedder: BertEmbedder) -> None:
    pin, pin2, weather = embedder.embed(
        ["How do I reset my card PIN?", "I forgot the PIN of my card", "Sunny weather in Madrid"]
    )
    assert float(pin @ pin2) > float(pin @ weather) + 0.3


def test_batches_sorted_by_length_come_back_in_input_order(embedder: BertEmbedder) -> None:
    texts = [f"{'word ' * (37 * i % 50)}item {i}" for i in range(70)]  # several batches, shuffled lengths
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([text]) for text in texts])
    assert np.abs(together - alone).max() < 1e-5


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(max_size=80), min_size=1, max_size=12))
def test_any_texts_embed_alone_as_in_a_batch(embedder: BertEmbedder, texts: list[str]) -> None:
    together = embedder.embed(texts)
    assert together.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    alone = np.vstack([embedder.embed([text]) for text in texts])
    assert np.abs(together - alone).max() < 1e-5


def test_threads_embedding_at_once_get_identical_results(embedder: BertEmbedder) -> None:
    texts = [f"message number {i}: please refund my order {i * 7}" for i in range(40)]
    expected = embedder.embed(texts)
    start = threading.Barrier(6)

    def work(offset: int) -> np.ndarray:
        start.wait()
        rotated = texts[offset:] + texts[:offset]
        return np.roll(embedder.embed(rotated), offset, axis=0)

    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(work, range(0, 30, 5)))
    for result in results:
        assert np.abs(result - expected).max() < 1e-5


def test_get_embedder_shares_one_instance_built_once_under_concurrency() -> None:
    start = threading.Barrier(4)

    def fetch(_: int) -> BertEmbedder:
        start.wait()
        return get_embedder(quantize=False)

    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(fetch, range(4)))
    assert all(item is found[0] for item in found)
    assert get_embedder() is found[0]


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(InvalidInputError, match="batch_size"):
        BertEmbedder(batch_size=0)
