"""EmbeddingCache and CachedEmbedder: hits, misses, the LRU bound, the SQLite file, threads."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import BertEmbedder, CachedEmbedder, EmbedderWrapper, EmbeddingCache
from norma.errors import StoreError


class CountingEmbedder(EmbedderWrapper):
    """Wraps the real embedder and records every text that reaches the model."""

    def __init__(self, inner: BertEmbedder) -> None:
        super().__init__(inner)
        self.seen: list[str] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.seen.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture
def counting(embedder: BertEmbedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)


@pytest.mark.model
def test_only_misses_reach_the_model(counting: CountingEmbedder, embedder: BertEmbedder) -> None:
    cached = CachedEmbedder(counting)
    first = cached.embed(["refund my order", "reset my PIN", "refund my order"])
    assert counting.seen == ["refund my order", "reset my PIN"]
    second = cached.embed(["reset my PIN", "close my account", "refund my order"])
    assert counting.seen == ["refund my order", "reset my PIN", "close my account"]
    assert (cached.hits, cached.misses) == (3, 3)
    assert np.array_equal(second[0], first[1])
    assert np.array_equal(second[2], first[0])
    assert np.abs(second - embedder.embed(["reset my PIN", "close my account", "refund my order"])).max() < 1e-5


@pytest.mark.model
def test_the_persisted_cache_survives_a_reopen(counting: CountingEmbedder, tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"
    cache = EmbeddingCache(path)
    vectors = CachedEmbedder(counting, cache).embed(["rule one", "rule two"])
    cache.close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    counting.seen.clear()
    reopened = CachedEmbedder(counting, EmbeddingCache(path))
    again = reopened.embed(["rule two", "rule one", "rule three"])
    assert counting.seen == ["rule three"]
    assert np.array_equal(again[0], vectors[1])
    assert np.array_equal(again[1], vectors[0])


def test_keys_include_the_model_id(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.put_many("model-a", ["text"], np.ones((1, 3), dtype=np.float32))
    assert cache.get_many("model-b", ["text"]) == [None]
    (found,) = cache.get_many("model-a", ["text"])
    assert found is not None
    assert found.tolist() == [1.0, 1.0, 1.0]


def test_the_memory_lru_is_bounded_and_evicts_the_least_recently_used() -> None:
    cache = EmbeddingCache(max_entries=2)
    cache.put_many("m", ["a", "b"], np.eye(2, dtype=np.float32))
    assert cache.get_many("m", ["a"])[0] is not None  # "a" is now the most recent
    cache.put_many("m", ["c"], np.ones((1, 2), dtype=np.float32))
    assert len(cache) == 2
    assert [v is not None for v in cache.get_many("m", ["a", "b", "c"])] == [True, False, True]


def test_evicted_entries_come_back_from_the_file(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite", max_entries=1)
    cache.put_many("m", ["a", "b"], np.eye(2, dtype=np.float32))
    assert len(cache) == 1
    (a,) = cache.get_many("m", ["a"])
    assert a is not None
    assert a.tolist() == [1.0, 0.0]


def test_cached_vectors_are_read_only() -> None:
    cache = EmbeddingCache()
    cache.put_many("m", ["a"], np.ones((1, 2), dtype=np.float32))
    (vector,) = cache.get_many("m", ["a"])
    assert vector is not None
    with pytest.raises(ValueError, match="read-only"):
        vector[0] = 5.0


def test_a_file_that_is_not_sqlite_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="embedding cache"):
        EmbeddingCache(path)


def test_a_write_waits_for_another_process_writing_the_file(tmp_path: Path) -> None:
    """Two ``norma match`` runs share the user's cache file: a write waits for the other's, it does not fail."""
    path = tmp_path / "c.sqlite"
    cache = EmbeddingCache(path)
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)  # another process's, to SQLite
    other.execute("BEGIN IMMEDIATE")  # holds the write lock
    other.execute("INSERT INTO embeddings VALUES ('m', x'00', 1, x'0000803f')")
    release = threading.Timer(0.3, other.execute, ["COMMIT"])
    release.start()
    try:
        cache.put_many("m", ["a"], np.ones((1, 2), dtype=np.float32))
        assert not release.is_alive()  # it waited for the other writer to commit
    finally:
        release.join()
        other.close()
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT model_id, dim FROM embeddings ORDER BY dim").fetchall()
    assert rows == [("m", 1), ("m", 2)]


@pytest.mark.model
def test_threads_sharing_a_cached_embedder_agree(counting: CountingEmbedder, tmp_path: Path) -> None:
    cached = CachedEmbedder(counting, EmbeddingCache(tmp_path / "c.sqlite"))
    texts = [f"rule {i % 15}: never do thing {i % 15}" for i in range(60)]
    start = threading.Barrier(4)

    def work(_: int) -> np.ndarray:
        start.wait()
        return cached.embed(texts)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    for result in results[1:]:
        assert np.abs(result - results[0]).max() < 1e-5
    assert set(counting.seen) == set(texts)
    assert cached.hits + cached.misses == 240
