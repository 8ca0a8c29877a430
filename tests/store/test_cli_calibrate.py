"""`norma rules calibrate` against a real store (SQLite file and PostgreSQL): the gate picked from labelled
messages, stored with the tenant's rules, shown, cleared; bad input is one readable line and exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]
BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
TENANT = "northwind-bank"
LABELLED = [
    {"message": "someone took money from my account and it was not me", "expected": ["fraud-suspected"]},
    {"message": "I can't find my debit card, I think I left it on the bus", "expected": ["lost-or-stolen-card"]},
    {"message": "what is the capital of australia", "expected": []},
]


def _labelled(tmp_path: Path, items: list[dict[str, object]] | None = None) -> str:
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in (items or LABELLED)), encoding="utf-8")
    return str(path)


def test_calibrate_stores_the_gate_and_clear_removes_it(run_cli: Run, store_url: str, tmp_path: Path) -> None:
    assert run_cli("rules", "import", BANKING, "--db", store_url).code == 0
    messages = _labelled(tmp_path)
    args = ("rules", "calibrate", "--tenant", TENANT, "--messages", messages, "--db", store_url)
    dry = run_cli(*args, "--target-recall", "1", "--dry-run", "--format", "json")
    assert dry.code == 0, dry.err
    shown = json.loads(dry.out)
    assert (shown["stored"], shown["version"], shown["previous"]) == (False, None, None)
    assert shown["gate"]["kind"] == "calibrated"
    assert shown["gate"]["terms"]["recall"] == 1.0
    assert shown["gate"]["terms"]["target"] == "recall >= 1"
    assert shown["gate"]["terms"]["messages"] == 3

    stored = run_cli(*args, "--target-recall", "1", "--format", "json")
    assert stored.code == 0, stored.err
    payload = json.loads(stored.out)
    assert (payload["stored"], payload["version"]) == (True, 2)  # the import was version 1
    assert payload["gate"] == shown["gate"]  # deterministic

    table = run_cli(*args, "--target-recall", "1")
    assert table.code == 0
    assert "similarity >=" in table.out
    assert "recall >= 1" in table.out

    cleared = run_cli("rules", "calibrate", "--tenant", TENANT, "--clear", "--db", store_url, "--format", "json")
    assert cleared.code == 0
    assert json.loads(cleared.out) == {"tenant": TENANT, "gate": None, "version": 4}


def test_calibrate_bad_input_is_one_line_and_exit_2(run_cli: Run, store_url: str, tmp_path: Path) -> None:
    assert run_cli("rules", "import", BANKING, "--db", store_url).code == 0
    base = ("rules", "calibrate", "--tenant", TENANT, "--db", store_url)
    ghost = _labelled(tmp_path, [{"message": "hi", "expected": ["ghost"]}])
    unknown = run_cli(*base, "--messages", ghost)
    assert unknown.code == 2
    assert unknown.err.strip() == (
        f"norma: error: {ghost}:line 1: unknown rule id(s) 'ghost' (expected ids must be rules of the rulebook "
        "evaluated)"
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"message": "hi", "rules": []}\n', encoding="utf-8")
    shape = run_cli(*base, "--messages", str(bad))
    assert shape.code == 2
    assert shape.code == 2
    assert shape.err.strip() == (
        f"norma: error: {bad}:line 1: unknown key(s) 'rules' (the keys are message, expected, scenario, step)"
    )
    neither = run_cli(*base)
    assert neither.code == 2
    assert neither.err == (
        "norma: error: give --messages FILE and/or --synthesize N to calibrate, or --clear to remove the calibrated "
        "gate\n"
    )
    both = run_cli(*base, "--messages", _labelled(tmp_path), "--target-recall", "0.5", "--target-precision", "0.5")
    assert both.code == 2
    assert "not both" in both.err
