"""Judge votes cached by (model, prompt key): in memory, or in a SQLite file shared by processes.

The key (:meth:`norma.llm.Judge.vote_key`) hashes everything that shapes a reply: the prompt format's version, the
messages, the temperature, the reply's token budget and the vote's seed. A cached vote is returned as it was
stored, so a re-run makes no model call and gives the same verdict. Only valid votes are stored: a reply that was
not a verdict is asked again next time.

The file uses SQLite's WAL journal and a busy timeout, so several processes (and threads) may read and write it at
once; a write is one ``INSERT OR REPLACE`` (two writers of the same key write the same vote, or the later one wins).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path

from norma._cache import CACHE_DIR_ENV, cache_dir, make_cache_folder, open_sqlite_cache
from norma.errors import InvalidInputError, StoreError
from norma.llm._verdict import Vote

__all__ = ["CACHE_DIR_ENV", "MAX_MEMORY_VOTES", "USER_CACHE_FILE", "JudgeCache", "judge_cache_path"]

USER_CACHE_FILE = "judge.sqlite3"
"""Name of the persisted judge cache, in ``<cache folder>/llm/``."""
_BUSY_MS = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS votes (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    passed INTEGER NOT NULL,
    score REAL NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID
"""


def judge_cache_path() -> Path:
    """Where :meth:`JudgeCache.in_user_cache` keeps its file: ``<folder>/llm/judge.sqlite3``, the folder being
    ``$NORMA_CACHE_DIR``, else ``$XDG_CACHE_HOME/norma``, else ``~/.cache/norma`` (norma's one cache folder)."""
    return cache_dir() / "llm" / USER_CACHE_FILE


MAX_MEMORY_VOTES = 100_000
"""Most votes an in-memory cache keeps (the least recently used go first): a long-running service stays bounded,
about 30 MB at most."""


class JudgeCache:
    """Votes by (model, key). ``path``: a SQLite file (created if missing); None: in memory, for this process only,
    at most ``max_votes`` of them (the least recently used are forgotten first).

    Thread-safe. Raises :class:`norma.errors.StoreError` when the file cannot be opened, read or written.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, max_votes: int = MAX_MEMORY_VOTES) -> None:
        if max_votes < 1:
            raise InvalidInputError(f"max_votes must be at least 1, not {max_votes}", location="max_votes")
        self.path = Path(path) if path is not None else None
        self.max_votes = max_votes
        self._lock = threading.Lock()
        self._memory: OrderedDict[tuple[str, str], Vote] = OrderedDict()
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self._db = self._open(self.path)

    @classmethod
    def in_user_cache(cls) -> JudgeCache:
        """The cache persisted at :func:`judge_cache_path` (its folder is created when missing)."""
        path = judge_cache_path()
        make_cache_folder(path.parent)
        return cls(path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        return open_sqlite_cache(path, _SCHEMA, "judge cache", busy_ms=_BUSY_MS)

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path) if self.path is not None else None!r})"

    def get(self, model: str, key: str) -> Vote | None:
        """The vote stored for ``model`` and ``key``, or None."""
        with self._lock:
            if self._db is None:
                found = self._memory.get((model, key))
                if found is not None:
                    self._memory.move_to_end((model, key))
                return found
            try:
                row = self._db.execute(
                    "SELECT passed, score, reason FROM votes WHERE model = ? AND key = ?", (model, key)
                ).fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read the judge cache: {exc}", source=str(self.path)) from exc
        return None if row is None else Vote(bool(row[0]), float(row[1]), str(row[2]))

    def put(self, model: str, key: str, vote: Vote) -> None:
        """Store ``vote`` for ``model`` and ``key`` (replacing what was there)."""
        with self._lock:
            if self._db is None:
                self._memory[(model, key)] = vote
                self._memory.move_to_end((model, key))
                while len(self._memory) > self.max_votes:
                    self._memory.popitem(last=False)
                return
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO votes VALUES (?, ?, ?, ?, ?)",
                    (model, key, int(vote.passed), vote.score, vote.reason),
                )
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write the judge cache: {exc}", source=str(self.path)) from exc

    def __len__(self) -> int:
        """How many votes are stored."""
        with self._lock:
            if self._db is None:
                return len(self._memory)
            try:
                return int(self._db.execute("SELECT COUNT(*) FROM votes").fetchone()[0])
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read the judge cache: {exc}", source=str(self.path)) from exc

    def clear(self) -> None:
        """Forget every vote (the next judgement asks the model again)."""
        with self._lock:
            self._memory.clear()
            if self._db is not None:
                try:
                    self._db.execute("DELETE FROM votes")
                except sqlite3.Error as exc:
                    raise StoreError(f"cannot clear the judge cache: {exc}", source=str(self.path)) from exc

    def close(self) -> None:
        """Close the SQLite file, if any (using the cache afterwards raises StoreError)."""
        with self._lock:
            if self._db is not None:
                self._db.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
