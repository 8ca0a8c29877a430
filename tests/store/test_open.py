"""open_store: URLs, the environment variable, the default path, and what a bad URL says."""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.errors import ConfigError, StoreError
from norma.store import DEFAULT_DB_URL, PostgresRuleStore, SQLiteRuleStore, open_store
from norma.store._open import resolve_url
from norma.store._postgres import redact_url


def test_default_is_a_sqlite_file_under_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NORMA_DB_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert resolve_url(None) == DEFAULT_DB_URL == "sqlite:///./.norma/norma.db"
    store = open_store()
    try:
        assert isinstance(store, SQLiteRuleStore)
        assert (tmp_path / ".norma" / "norma.db").is_file()
    finally:
        store.close()


def test_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_DB_URL", f"sqlite:///{tmp_path}/from-env.db")
    store = open_store()
    store.close()
    assert (tmp_path / "from-env.db").is_file()
    explicit = open_store(f"sqlite:///{tmp_path}/explicit.db")  # an explicit URL wins over the variable
    explicit.close()
    assert (tmp_path / "explicit.db").is_file()


def test_absolute_and_relative_sqlite_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    relative = open_store("sqlite:///./nested/dir/rel.db")  # a relative path says so (./); see test_replace.py
    relative.close()
    assert (tmp_path / "nested" / "dir" / "rel.db").is_file()
    absolute = open_store(f"sqlite:///{tmp_path}/abs.db")
    assert absolute.url == f"sqlite:///{tmp_path}/abs.db"
    absolute.close()


def test_wal_mode(tmp_path: Path) -> None:
    import sqlite3

    open_store(f"sqlite:///{tmp_path}/w.db").close()
    with sqlite3.connect(tmp_path / "w.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_bad_urls() -> None:
    with pytest.raises(ConfigError, match="unknown rule store URL 'mysql://u:\\*\\*\\*@h/db'"):
        open_store("mysql://u:secret@h/db")
    with pytest.raises(ConfigError, match="file path"):
        open_store("sqlite:///:memory:")
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresRuleStore("postgresql://nobody@127.0.0.1:1/none", connect_timeout=1)


def test_unwritable_location(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError):
        open_store(f"sqlite:///{blocker}/sub/norma.db")


def test_redact_url() -> None:
    assert redact_url("postgresql://bob:hunter2@db.example:5433/rules?sslmode=require") == (
        "postgresql://bob:***@db.example:5433/rules?sslmode=require"
    )
    assert redact_url("postgresql://bob@db/rules") == "postgresql://bob@db/rules"
