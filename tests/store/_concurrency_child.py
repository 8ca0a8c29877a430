"""Child process of test_concurrency: a writer or a reader hammering one SQLite store until a deadline.

Usage: python _concurrency_child.py URL ROLE NAME SECONDS

Writers upsert small batches in a loop: each batch rewrites one of the writer's own rules and the rule ``shared``
(both writers edit it) with a new counter, so every batch is a change. Readers read versions, lists, rules and
histories in a loop and check the version never goes back. Each prints one JSON line with what it did and every
error it met (there must be none).
"""

from __future__ import annotations

import json
import sys
import time
import traceback

from norma.matching import Rule
from norma.store import open_store

TENANT = "busy"


def writer(url: str, name: str, seconds: float) -> dict[str, object]:
    store = open_store(url)
    versions: list[int] = []
    last: dict[str, str] = {}
    writes: dict[str, int] = {}
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
        own = f"{name}-{n % 5}"
        batch = [
            Rule(id=own, condition_text=f"{name} wrote this {n} times"),
            Rule(id="shared", condition_text=f"shared rule, {name} write {n}"),
        ]
        try:
            versions.append(store.upsert_rules(TENANT, batch))
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
            continue
        for rule in batch:
            last[rule.id] = rule.condition_text
            writes[rule.id] = writes.get(rule.id, 0) + 1
    store.close()
    return {"versions": versions, "last": last, "writes": writes, "errors": errors}


def reader(url: str, seconds: float) -> dict[str, object]:
    store = open_store(url)
    errors: list[str] = []
    reads = 0
    seen = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            version = store.version(TENANT)
            if version < seen:
                errors.append(f"version went back from {seen} to {version}")
            seen = version
            rules = store.list_rules(TENANT)
            if rules:
                store.get_rule(TENANT, rules[0].id)
                store.history(TENANT, rules[-1].id)
            reads += 1
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    store.close()
    return {"reads": reads, "errors": errors}


def main() -> None:
    url, role, name, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    try:
        result = writer(url, name, seconds) if role == "writer" else reader(url, seconds)
    except Exception:
        result = {"errors": [traceback.format_exc()]}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
