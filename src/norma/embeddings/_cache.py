"""An embedding cache keyed by (model id, text hash): a bounded in-memory LRU, optionally backed by SQLite.

The key is the embedder's ``model_id`` and the SHA-256 of the text's UTF-8 bytes, so a different model (or its
int8 variant) never reads another's vectors. With a ``path``, every vector put is also written to a SQLite file
(WAL journal, one table ``embeddings(model_id, text_sha256, dim, vector)``) and a miss in memory is looked up
there, so rule texts embedded once are never embedded again, across processes and restarts
(:meth:`EmbeddingCache.in_user_cache` keeps that file in the user's cache folder; ``norma match`` uses it for rule
vectors). All methods are thread-safe.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from norma._cache import cache_dir, make_cache_folder, open_sqlite_cache
from norma.embeddings._protocol import Embedder, EmbedderWrapper
from norma.embeddings._tokenize import check_texts
from norma.errors import InvalidInputError, StoreError

__all__ = ["CachedEmbedder", "EmbeddingCache", "USER_CACHE_FILE", "text_key", "user_cache_dir"]

DEFAULT_MAX_ENTRIES = 100_000
USER_CACHE_FILE = "vectors.sqlite3"
"""Name of the persisted cache in the user's cache folder (:meth:`EmbeddingCache.in_user_cache`)."""
_BUSY_MS = 10_000
"""How long a write waits for another process's (``norma match`` runs sharing the user's cache) before failing."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, text_sha256)
) WITHOUT ROWID
"""


def user_cache_dir() -> Path:
    """The user's cache folder for norma: ``$NORMA_CACHE_DIR``, else ``$XDG_CACHE_HOME/norma``, else
    ``~/.cache/norma`` (not created here)."""
    return cache_dir()


def text_key(text: str) -> bytes:
    """The SHA-256 digest of a text's UTF-8 bytes (32 bytes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Vectors by (model id, text), at most ``max_entries`` in memory (least recently used evicted first).

    Args:
        path: a SQLite file to persist vectors in (created if missing); ``None`` keeps them in memory only.
        max_entries: how many vectors the in-memory LRU holds.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise InvalidInputError(f"max_entries must be at least 1, not {max_entries}", location="max_entries")
        self.max_entries = max_entries
        self.path = Path(path) if path is not None else None
        self._memory: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self._db = self._open(self.path)

    @classmethod
    def in_user_cache(cls, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> EmbeddingCache:
        """The cache persisted in the user's cache folder: ``<folder>/embeddings/vectors.sqlite3``, the folder being
        ``$NORMA_CACHE_DIR``, else ``$XDG_CACHE_HOME/norma``, else ``~/.cache/norma`` (created when missing)."""
        return cls(make_cache_folder(cache_dir() / "embeddings") / USER_CACHE_FILE, max_entries=max_entries)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        return open_sqlite_cache(path, _SCHEMA, "embedding cache", busy_ms=_BUSY_MS)

    def __len__(self) -> int:
        """How many vectors are in memory."""
        with self._lock:
            return len(self._memory)

    def get_many(self, model_id: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each text, or ``None`` where there is none."""
        keys = [text_key(text) for text in texts]
        found: list[np.ndarray | None] = [None] * len(keys)
        missing: dict[bytes, list[int]] = {}
        with self._lock:
            for index, key in enumerate(keys):
                vector = self._memory.get((model_id, key))
                if vector is not None:
                    self._memory.move_to_end((model_id, key))
                    found[index] = vector
                else:
                    missing.setdefault(key, []).append(index)
            if missing and self._db is not None:
                for key, vector in self._read(model_id, list(missing)).items():
                    self._remember(model_id, key, vector)
                    for index in missing[key]:
                        found[index] = vector
        return found

    def put_many(self, model_id: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per text (rows of ``vectors``), in memory and, if persisted, on disk."""
        if len(texts) != len(vectors):
            raise InvalidInputError(f"{len(texts)} texts but {len(vectors)} vectors")
        rows = []
        with self._lock:
            for text, row in zip(texts, vectors, strict=True):
                vector = np.array(row, dtype=np.float32)
                vector.setflags(write=False)
                key = text_key(text)
                self._remember(model_id, key, vector)
                rows.append((model_id, key, vector.shape[0], vector.tobytes()))
            if self._db is not None and rows:
                try:
                    with self._db:
                        self._db.execute("BEGIN")
                        self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)", rows)
                except sqlite3.Error as exc:
                    raise StoreError(f"cannot write the embedding cache: {exc}", source=str(self.path)) from exc

    def close(self) -> None:
        """Close the SQLite file, if any (the in-memory entries stay usable)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _remember(self, model_id: str, key: bytes, vector: np.ndarray) -> None:
        self._memory[(model_id, key)] = vector
        self._memory.move_to_end((model_id, key))
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)

    def _read(self, model_id: str, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        assert self._db is not None
        out: dict[bytes, np.ndarray] = {}
        try:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                query = (
                    f"SELECT text_sha256, dim, vector FROM embeddings WHERE model_id = ? AND text_sha256 IN ({marks})"
                )
                for key, dim, blob in self._db.execute(query, [model_id, *chunk]):
                    vector = np.frombuffer(blob, dtype=np.float32)
                    if vector.shape != (dim,):
                        raise StoreError("a cached vector has the wrong length", source=str(self.path))
                    out[bytes(key)] = vector
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the embedding cache: {exc}", source=str(self.path)) from exc
        return out


class CachedEmbedder(EmbedderWrapper):
    """An :class:`Embedder` that answers from an :class:`EmbeddingCache` and embeds only the misses.

    Attributes ``hits`` and ``misses`` count texts answered from the cache and texts sent to the wrapped embedder.
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None = None) -> None:
        super().__init__(embedder)
        self.cache = cache if cache is not None else EmbeddingCache()
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        """The wrapped embedder."""
        return self.inner

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``: cached ones as stored, the others embedded (once per distinct text) and cached."""
        items = check_texts(texts)
        found = self.cache.get_many(self.model_id, items)
        todo = list(dict.fromkeys(text for text, vector in zip(items, found, strict=True) if vector is None))
        fresh: dict[str, np.ndarray] = {}
        if todo:
            vectors = self.embedder.embed(todo)
            self.cache.put_many(self.model_id, todo, vectors)
            fresh = dict(zip(todo, vectors, strict=True))
        with self._lock:
            self.misses += len(todo)
            self.hits += len(items) - len(todo)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        for index, (text, vector) in enumerate(zip(items, found, strict=True)):
            out[index] = vector if vector is not None else fresh[text]
        return out
