"""norma's one cache folder, and the SQLite files caches keep in it (embeddings, judge votes).

Root-private: it serves every package (``embeddings`` and ``llm`` sit side by side and cannot import each other).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from norma.errors import StoreError

__all__ = ["CACHE_DIR_ENV", "cache_dir", "make_cache_folder", "open_sqlite_cache"]

CACHE_DIR_ENV = "NORMA_CACHE_DIR"
"""The variable naming norma's cache folder."""


def cache_dir() -> Path:
    """The user's cache folder for norma: ``$NORMA_CACHE_DIR``, else ``$XDG_CACHE_HOME/norma``, else
    ``~/.cache/norma`` (not created here)."""
    explicit = os.environ.get(CACHE_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "norma"


def make_cache_folder(folder: Path) -> Path:
    """``folder``, created when missing.

    Raises:
        StoreError: it cannot be created (the hint names ``$NORMA_CACHE_DIR``).
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the cache folder: {exc.strerror or exc}", source=str(folder), hint=f"set {CACHE_DIR_ENV}"
        ) from exc
    return folder


def open_sqlite_cache(path: Path, schema: str, what: str, *, busy_ms: int = 0) -> sqlite3.Connection:
    """A cache's SQLite file, created with ``schema`` when missing: WAL journal (readers never wait for the one
    writer), ``synchronous=NORMAL`` (a cache may lose its last writes in a power cut, never its consistency), and a
    busy timeout of ``busy_ms`` for files several processes write.

    Raises:
        StoreError: the file cannot be opened (``what`` names the cache in the message).
    """
    try:
        db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=busy_ms / 1000)
        if busy_ms:
            db.execute(f"PRAGMA busy_timeout={busy_ms}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(schema)
    except sqlite3.Error as exc:
        raise StoreError(
            f"cannot open the {what}: {exc}", source=str(path), hint="delete the file or choose another"
        ) from exc
    return db
