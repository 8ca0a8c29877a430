"""A process SIGKILLed in the middle of an import: committed batches stay, the interrupted one leaves no trace."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from norma.store import open_store
from tests.store.conftest import BACKENDS, make_url

CHILD = Path(__file__).with_name("_import_child.py")
REPO = Path(__file__).resolve().parents[2]
PAUSE_AT = 4  # batches 0-3 commit; batch 4 is killed inside its transaction


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_sigkill_mid_import(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    url = make_url(backend, request, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NORMA_EMBEDDINGS_THREADS": "1"}
    seen: list[str] = []
    with subprocess.Popen(
        [sys.executable, str(CHILD), url, str(PAUSE_AT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            for line in child.stdout:
                seen.append(line.strip())
                if line.strip() == "PAUSED":
                    break
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(30)
        stderr = child.stderr.read()
    assert seen[-1:] == ["PAUSED"], (seen, stderr)
    assert child.returncode == -signal.SIGKILL
    assert f"COMMITTED {PAUSE_AT - 1}" in seen
    assert f"COMMITTED {PAUSE_AT}" not in seen

    store = open_store(url)  # opens cleanly after the crash
    try:
        if backend == "sqlite":
            import sqlite3

            with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert store.version("durable") == PAUSE_AT
        ids = [r.id for r in store.list_rules("durable")]
        assert ids == [f"r{i:04d}" for i in range(PAUSE_AT * 100)]
        assert not store.list_rules("durable", tag=f"batch-{PAUSE_AT}")
        vectors = store.load_vectors("durable", "sentence-transformers/all-MiniLM-L6-v2")
        assert set(vectors) == set(ids)
        first_lost = f"r{PAUSE_AT * 100:04d}"
        with pytest.raises(LookupError):
            store.history("durable", first_lost)
        # and the store takes writes again: the lost batch can simply be re-imported
        from tests.store._import_child import rules

        assert store.upsert_rules("durable", rules(PAUSE_AT)) == PAUSE_AT + 1
        assert len(store.list_rules("durable")) == (PAUSE_AT + 1) * 100
    finally:
        store.close()
