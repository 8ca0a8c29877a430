"""`norma rules calibrate` against a real store (SQLite file and PostgreSQL): the gate picked from labelled
messages, stored with the tenant's rules, shown, cleared; bad input is one readable line and exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

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
    assert (shown["gate"]["terms"]["target"], shown["gate"]["terms"]["goal"]) == ("recall", 1.0)
    assert shown["gate"]["terms"]["messages"] == 3

    stored = run_cli(*args, "--target-recall", "1", "--format", "json")
    assert stored.code == 0, stored.err
    payload = json.loads(stored.out)
    assert (payload["stored"], payload["version"]) == (True, 2)  # the import was version 1
    assert payload["gate"] == shown["gate"]  # deterministic

    table = run_cli(*args, "--target-recall", "1")
    assert table.code == 0
    assert "similarity >=" in table.out
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in table.out.splitlines() if "│" in line}
    assert (rows["target"], rows["recall"], rows["messages"]) == ("recall", "1.0", "3")

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
        f"norma: error: {ghost}:1: unknown rule id(s) 'ghost' (expected ids must be rules of the rulebook evaluated)"
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"message": "hi", "rules": []}\n', encoding="utf-8")
    shape = run_cli(*base, "--messages", str(bad))
    assert shape.code == 2
    assert shape.code == 2
    assert shape.err.strip() == (
        f"norma: error: {bad}:1: unknown key(s) 'rules' (the keys are message, expected, scenario, step)"
    )
    neither = run_cli(*base)
    assert neither.code == 2
    assert neither.err == (
        "norma: error: give --messages FILE and/or --synthesize N to calibrate, or --clear to remove the gate\n"
    )
    two = run_cli(*base, "--messages", _labelled(tmp_path), "--clear")
    assert (two.code, two.err) == (2, neither.err)
    target = run_cli(*base, "--clear", "--target-recall", "0.5")
    assert target.code == 2
    assert target.err == (
        "norma: error: --target-precision / --target-recall / --best-f1 need labelled messages (--messages FILE)\n"
    )
    removed = run_cli(*base, "--gate-quantile", "0.1")  # a tenant no longer stores a gate quantile
    assert removed.code == 2
    assert "--gate-quantile" in removed.err
    both = run_cli(*base, "--messages", _labelled(tmp_path), "--target-recall", "0.5", "--target-precision", "0.5")
    assert both.code == 2
    assert both.err == "norma: error: give one of --target-precision, --target-recall and --best-f1\n"
    inside = _labelled(tmp_path, LABELLED[:2])  # nothing expects no rule: no balance to find
    one_sided = run_cli(*base, "--messages", inside)
    assert one_sided.code == 2
    assert one_sided.err.startswith(
        "norma: error: a balanced calibration needs messages that expect no rule (or near misses): 2 expect a rule, "
        "0 none"
    )
    assert one_sided.err.count("\n") == 1
    assert run_cli(*base, "--messages", inside, "--best-f1", "--dry-run").code == 0  # a target needs no balance


def test_calibrate_without_a_target_refits_the_confidence_of_the_default_gate(run_cli: Run, store_url: str) -> None:
    from norma.matching import ConfidenceGate, snapshot_matcher
    from norma.store import open_store

    assert run_cli("rules", "import", BANKING, "--db", store_url).code == 0
    store = open_store(store_url)
    try:
        assert snapshot_matcher(store, TENANT).gate() == ConfidenceGate()
    finally:
        store.close()
    labelled = str(EXAMPLES / "rulebooks" / "banking-support.labelled.jsonl")
    args = ("rules", "calibrate", "--tenant", TENANT, "--messages", labelled, "--db", store_url)
    result = run_cli(*args, "--format", "json")
    assert result.code == 0, result.err
    gate = json.loads(result.out)["gate"]
    terms = gate["terms"]
    assert (gate["kind"], gate["score"], gate["threshold"], terms["target"]) == (
        "calibrated", "confidence", 0.7, "balanced",
    )  # fmt: skip
    assert terms["expecting_none"] == 6  # the file's messages with "expected": []
    assert set(terms["confidence"]) >= {"scale", "shift", "candidates"}
    inside = sum(1 for line in Path(labelled).read_text(encoding="utf-8").splitlines() if '"expected": []' not in line)
    assert round(terms["rejection"] * 6) / 6 == pytest.approx(terms["rejection"])  # a share of the 6
    assert round(terms["acc_at_1"] * inside) / inside == pytest.approx(terms["acc_at_1"])
    table = run_cli(*args, "--dry-run")
    assert table.code == 0, table.err
    assert "confidence >= 0.7" in table.out
    assert "acc_at_1" in table.out
    best = run_cli(*args, "--best-f1", "--dry-run", "--format", "json")
    assert json.loads(best.out)["gate"]["terms"]["target"] == "best_f1"


def test_calibrate_refits_the_confidence_every_match_of_the_tenant_reads(run_cli: Run, store_url: str) -> None:
    import math

    assert run_cli("rules", "import", BANKING, "--db", store_url).code == 0
    message = "I think someone used my card without asking me"
    match = ("match", message, "--tenant", TENANT, "--db", store_url, "--format", "json")
    before = {m["rule_id"]: m["enforcement"]["confidence"] for m in json.loads(run_cli(*match).out)["matches"]}
    labelled = str(EXAMPLES / "rulebooks" / "banking-support.labelled.jsonl")
    args = ("rules", "calibrate", "--tenant", TENANT, "--messages", labelled, "--db", store_url)
    result = run_cli(*args, "--format", "json")
    assert result.code == 0, result.err
    refit = json.loads(result.out)["gate"]["terms"]["confidence"]
    assert set(refit) == {"scale", "shift", "candidates", "ece_before", "ece_after"}
    assert 0 <= refit["ece_after"] <= 1
    assert 0 <= refit["ece_before"] <= 1
    assert refit["candidates"] >= 56  # at least one scored rule for each of the file's 56 messages
    assert (refit["scale"], refit["shift"]) != (1.0, 0.0)
    after = json.loads(run_cli(*match).out)["matches"]
    assert after, "the message still matches"
    for found in after:
        if found["rule_id"] in before:
            shipped = before[found["rule_id"]]
            z = max(-30.0, min(30.0, math.log(shipped / (1 - shipped))))
            expected = 1 / (1 + math.exp(-(refit["scale"] * z + refit["shift"])))
            assert found["enforcement"]["confidence"] == pytest.approx(expected, abs=1e-6)
    table = run_cli(*args, "--dry-run")
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in table.out.splitlines() if "│" in line}
    assert rows["confidence"].startswith(f"refitted: logit x {refit['scale']:.3f}")
