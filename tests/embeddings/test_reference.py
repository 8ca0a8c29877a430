"""The fp32 encoder reproduces sentence-transformers' all-MiniLM-L6-v2 vectors (stored reference vectors)."""

from __future__ import annotations

import numpy as np
import pytest

from norma.embeddings import DEFAULT_MODEL_ID, BertEmbedder

pytestmark = pytest.mark.model


def test_agrees_with_sentence_transformers_on_the_test_sentences(
    embedder: BertEmbedder, reference: tuple[list[str], np.ndarray]
) -> None:
    sentences, expected = reference
    vectors = embedder.embed(sentences)
    cosine = (vectors * expected).sum(axis=1)
    assert cosine.min() >= 0.9999, [sentences[i] for i in np.flatnonzero(cosine < 0.9999)]
    assert np.abs(vectors - expected).max() < 1e-4


def test_agrees_with_sentence_transformers_on_the_benchmark_messages(
    embedder: BertEmbedder, message_reference: tuple[list[str], np.ndarray]
) -> None:
    messages, expected = message_reference
    vectors = embedder.embed(messages)
    assert (vectors * expected).sum(axis=1).min() >= 0.9999
    assert np.abs(vectors - expected).max() < 1e-4


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   leading and trailing spaces   ",
        "I love this! 😀🎉👍",
        "东京是日本的首都。",
        "Café, naïve, façade, résumé, jalapeño, über",
        "Price: $1,299.99 — 20% off! #deal @store",
        "x " * 600,
    ],
)
def test_edge_case_texts_one_at_a_time(
    embedder: BertEmbedder, reference: tuple[list[str], np.ndarray], text: str
) -> None:
    sentences, expected = reference
    (vector,) = embedder.embed([text])
    assert float(vector @ expected[sentences.index(text)]) >= 0.9999


def test_texts_past_the_window_are_truncated_like_sentence_transformers(
    embedder: BertEmbedder, reference: tuple[list[str], np.ndarray]
) -> None:
    sentences, _ = reference
    long_texts = [s for s in sentences if len(s) > 1000]
    assert len(long_texts) >= 3
    assert embedder.token_counts(long_texts) == [256] * len(long_texts)
    # Only the first 254 word pieces count: appending more text changes nothing.
    base, longer = embedder.embed([long_texts[0], long_texts[0] + " completely different ending " * 20])
    assert float(base @ longer) >= 0.99999


def test_default_model_identity(embedder: BertEmbedder) -> None:
    assert embedder.model_id == DEFAULT_MODEL_ID
    assert embedder.dim == 384
    assert embedder.max_seq_length == 256
    assert not embedder.quantized
    assert embedder.token_counts(["", "hello world"]) == [2, 4]
