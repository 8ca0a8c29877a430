"""Two writers and several readers on one SQLite file for 10 s: no lock errors, no lost updates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from norma.store import open_store

CHILD = Path(__file__).with_name("_concurrency_child.py")
REPO = Path(__file__).resolve().parents[2]
SECONDS = 10
READERS = 3


@pytest.mark.slow
def test_two_writers_and_readers_on_one_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/busy.db"
    open_store(url).close()  # schema in place before the race starts
    env = {**os.environ, "PYTHONPATH": str(REPO), "NORMA_EMBEDDINGS_THREADS": "1"}
    roles = [("writer", "w1"), ("writer", "w2")] + [("reader", f"r{i}") for i in range(READERS)]
    children = [
        subprocess.Popen(
            [sys.executable, str(CHILD), url, role, name, str(SECONDS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for role, name in roles
    ]
    results = {}
    for (_, name), child in zip(roles, children, strict=True):
        out, err = child.communicate(timeout=SECONDS + 120)
        assert child.returncode == 0, err
        results[name] = json.loads(out.strip().splitlines()[-1])
    for name, result in results.items():
        assert result["errors"] == [], (name, result["errors"][:3])
    for i in range(READERS):
        assert results[f"r{i}"]["reads"] > 10

    w1, w2 = results["w1"], results["w2"]
    versions = w1["versions"] + w2["versions"]
    assert len(w1["versions"]) > 10
    assert len(w2["versions"]) > 10
    # every committed batch got its own version: none was lost or merged
    assert sorted(versions) == list(range(1, len(versions) + 1))
    assert w1["versions"] == sorted(w1["versions"])
    assert w2["versions"] == sorted(w2["versions"])

    store = open_store(url)
    try:
        assert store.version("busy") == len(versions)
        for result in (w1, w2):
            for rule_id, text in result["last"].items():
                if rule_id != "shared":
                    assert store.get_rule("busy", rule_id).condition_text == text
                    assert len(store.history("busy", rule_id)) == result["writes"][rule_id]
        shared = store.history("busy", "shared")
        assert len(shared) == w1["writes"]["shared"] + w2["writes"]["shared"]
        # the shared rule holds the last write of whichever writer committed last
        last_writer = w1 if max(w1["versions"]) > max(w2["versions"]) else w2
        assert store.get_rule("busy", "shared").condition_text == last_writer["last"]["shared"]
        assert shared[-1].tenant_version == len(versions)
    finally:
        store.close()
