"""Child process of test_durability: imports 1,000 rules in batches of 100 and reports each commit.

Usage: python _import_child.py URL PAUSE_AT

Before each batch it prints ``BATCH k``; after each commit ``COMMITTED k``. In batch ``PAUSE_AT`` it stops *inside*
the write transaction, after the batch's rules were written and before the commit (instrumented from here, through
the database drivers' public hooks: sqlite3's trace callback, psycopg's cursor factory), prints ``PAUSED`` and
sleeps, for the parent to SIGKILL it there.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from norma.matching import Rule
from norma.store import PostgresRuleStore, SQLiteRuleStore, open_store

TENANT = "durable"
BATCH = 100
TOTAL = 1000
state = {"batch": -1, "pause_at": -1}


def pause_here(sql: str) -> None:
    if state["batch"] == state["pause_at"] and "INSERT INTO rule_history" in sql:
        print("PAUSED", flush=True)
        time.sleep(120)


def rules(batch: int) -> list[Rule]:
    return [
        Rule(id=f"r{i:04d}", condition_text=f"customer asks about product number {i}", tags=[f"batch-{batch}"])
        for i in range(batch * BATCH, (batch + 1) * BATCH)
    ]


def main() -> None:
    url, pause_at = sys.argv[1], int(sys.argv[2])
    state["pause_at"] = pause_at
    store = open_store(url)
    if isinstance(store, SQLiteRuleStore):
        store._connection().set_trace_callback(pause_here)
    elif isinstance(store, PostgresRuleStore):
        import psycopg

        class PausingCursor(psycopg.Cursor[Any]):
            def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
                super().executemany(query, params_seq, **kwargs)
                pause_here(str(query))

        store._connection().cursor_factory = PausingCursor
    for batch in range(TOTAL // BATCH):
        state["batch"] = batch
        print(f"BATCH {batch}", flush=True)
        store.upsert_rules(TENANT, rules(batch))
        print(f"COMMITTED {batch}", flush=True)
    store.close()


if __name__ == "__main__":
    main()
