"""BatchingEmbedder: concurrent calls from many threads share model calls and get the rows they would alone."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from norma.embeddings import BatchingEmbedder, BertEmbedder
from norma.errors import NormaError

MESSAGES = [
    f"message number {i}: I would like to know about my {w}" for i, w in enumerate(["card", "loan", "fee", "app"])
]


def _concurrently(batching: BatchingEmbedder, calls: list[list[str]], started: threading.Event) -> list[object]:
    """Run ``embed`` for each call in its own thread, all queued while ``started`` shows a batch is running."""
    results: list[object] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            results[i] = batching.embed(calls[i])
        except Exception as exc:
            results[i] = exc

    started.wait(10)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 10
    while len(batching._queue) < len(calls) and time.monotonic() < deadline:  # all queued behind the long batch
        time.sleep(0.001)
    for thread in threads:
        thread.join(30)
    return results


def _long_first_batch(batching: BatchingEmbedder) -> tuple[threading.Thread, threading.Event]:
    started = threading.Event()

    def long_batch() -> None:
        started.set()
        batching.embed([f"a warm-up text number {i} " * 6 for i in range(48)])

    thread = threading.Thread(target=long_batch)
    thread.start()
    while not batching._running:
        time.sleep(0.0005)
    return thread, started


def test_concurrent_calls_share_one_model_call_and_get_their_own_rows(embedder: BertEmbedder) -> None:
    batching = BatchingEmbedder(embedder)
    alone = [embedder.embed([m]) for m in MESSAGES]
    first, started = _long_first_batch(batching)
    results = _concurrently(batching, [[m] for m in MESSAGES], started)
    first.join(30)
    assert batching.batches == 2  # the long batch, then the four queued calls together
    for got, expected in zip(results, alone, strict=True):
        assert isinstance(got, np.ndarray)
        assert got.shape == (1, embedder.dim)
        np.testing.assert_allclose(got, expected, atol=1e-5)


def test_a_lone_call_runs_at_once_and_passes_attributes_through(embedder: BertEmbedder) -> None:
    batching = BatchingEmbedder(embedder)
    np.testing.assert_allclose(batching.embed(MESSAGES[:2]), embedder.embed(MESSAGES[:2]), atol=1e-5)
    assert batching.batches == 1
    assert (batching.model_id, batching.dim) == (embedder.model_id, embedder.dim)
    assert batching.token_counts(["hello world"]) == embedder.token_counts(["hello world"])
    assert batching.embed([]).shape == (0, embedder.dim)


def test_a_failing_call_does_not_fail_the_others_of_its_batch(embedder: BertEmbedder) -> None:
    batching = BatchingEmbedder(embedder)
    first, started = _long_first_batch(batching)
    calls: list[list[str]] = [[MESSAGES[0]], [None], [MESSAGES[1]]]  # type: ignore[list-item]
    results = _concurrently(batching, calls, started)
    first.join(30)
    assert isinstance(results[0], np.ndarray)
    assert isinstance(results[2], np.ndarray)
    assert isinstance(results[1], NormaError | TypeError | ValueError)
    np.testing.assert_allclose(results[2], embedder.embed([MESSAGES[1]]), atol=1e-5)


def test_max_texts_bounds_a_batch(embedder: BertEmbedder) -> None:
    with pytest.raises(ValueError, match="max_texts"):
        BatchingEmbedder(embedder, max_texts=0)
    batching = BatchingEmbedder(embedder, max_texts=2)
    first, started = _long_first_batch(batching)
    _concurrently(batching, [[m] for m in MESSAGES], started)
    first.join(30)
    assert batching.batches == 3  # the long batch, then 2 + 2


def test_the_int8_encoder_gives_each_caller_its_own_vector_bit_for_bit() -> None:
    """int8 (encoder version 2) embeds every text alone, so a caller joined into another's model call gets exactly
    the vector it would get alone (in padded batches, int8 vectors moved with their companions)."""
    from norma.embeddings import get_embedder

    int8 = get_embedder(quantize=True)
    batching = BatchingEmbedder(int8)
    calls = [[m] for m in MESSAGES] + [MESSAGES[:2], ["a much longer message " * 20]]
    alone = [int8.embed(call) for call in calls]
    first, started = _long_first_batch(batching)
    results = _concurrently(batching, calls, started)
    first.join(30)
    assert batching.batches == 2  # the long batch, then the queued calls together
    for got, expected in zip(results, alone, strict=True):
        assert isinstance(got, np.ndarray)
        assert np.array_equal(got, expected)
