"""What only the SQLite store has: waiting out a busy database instead of failing with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from norma.embeddings import Embedder
from norma.errors import StoreError
from norma.matching import Rule
from norma.store import SQLiteRuleStore


def _hold_write_lock(path: Path, seconds: float, started: threading.Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE tenants SET version = version WHERE 0")
    started.set()
    time.sleep(seconds)
    conn.execute("COMMIT")
    conn.close()


def test_a_writer_waits_for_another_writer(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "busy.db"
    store = SQLiteRuleStore(path, lock_timeout=0.3)  # shorter than the other writer's transaction
    store.lock_timeout = 10.0
    started = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(path, 1.5, started))
    holder.start()
    started.wait(5)
    begun = time.monotonic()
    try:
        assert store.upsert_rules("acme", [Rule(id="a", condition_text="hello")], embedder=embedder) == 1
        assert time.monotonic() - begun > 1.0  # it did wait, and did not fail
        assert store.list_rules("acme")[0].id == "a"
    finally:
        holder.join()
        store.close()


def test_readers_are_not_blocked_by_a_writer(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "read.db"
    store = SQLiteRuleStore(path, lock_timeout=0.2)
    store.upsert_rules("acme", [Rule(id="a", condition_text="hello")], embedder=embedder)
    started = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(path, 1.0, started))
    holder.start()
    started.wait(5)
    try:
        begun = time.monotonic()
        assert store.version("acme") == 1
        assert [r.id for r in store.list_rules("acme")] == ["a"]
        assert time.monotonic() - begun < 0.5
    finally:
        holder.join()
        store.close()


def test_giving_up_is_a_store_error_not_database_is_locked(tmp_path: Path, embedder: Embedder) -> None:
    path = tmp_path / "stuck.db"
    store = SQLiteRuleStore(path, lock_timeout=0.3)
    started = threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(path, 1.5, started))
    holder.start()
    started.wait(5)
    try:
        with pytest.raises(StoreError, match="stayed busy") as caught:
            store.upsert_rules("acme", [Rule(id="a", condition_text="hello")], embedder=embedder)
        assert "database is locked" not in str(caught.value)
        assert caught.value.hint is not None
    finally:
        holder.join()
        store.close()
    reopened = SQLiteRuleStore(path)
    try:
        assert reopened.version("acme") == 0  # nothing half-written
    finally:
        reopened.close()
