"""``norma rules eval`` and ``norma rules doctor``: exact lines, JSON keys, exit codes, a file or a stored tenant,
and no store ever created."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from norma.embeddings import get_embedder
from norma.matching import tenant_matcher
from norma.store import import_rulebook, open_store
from tests.conftest import EXAMPLES, CliResult

DATA = Path(__file__).parent / "data"
RULEBOOK = str(DATA / "known_rulebook.yaml")
LABELLED = str(DATA / "known_rulebook.labelled.jsonl")
Run = Callable[..., CliResult]
pytestmark = pytest.mark.model


def _fits_80_columns(text: str) -> None:
    assert max(len(line) for line in text.splitlines()) <= 80


def test_eval_table(run_cli: Run) -> None:
    result = run_cli("rules", "eval", "--rules", RULEBOOK, "--messages", LABELLED)
    assert result.code == 0, result.err
    lines = [line.rstrip() for line in result.out.splitlines()]
    assert lines[:2] == [f"{RULEBOOK}: 10 rules", "9 messages: 7 expect a rule, 2 expect none"]
    assert lines[2].startswith("gate: ")
    assert "│ acc@1          │ 0.857 │ top-ranked rule expected (relevance, no gate)      │" in lines
    assert "│ recall@3       │ 1.000 │ an expected rule in the top 3 (relevance)          │" in lines
    assert "│ MRR            │ 0.929 │ mean 1/rank of the first expected rule (relevance) │" in lines
    assert "│ priority moved │     0 │ relevance top returned, but not first              │" in lines
    assert not any(line.startswith("priority changed the top rule") for line in lines)  # every priority is 0
    assert "top confusions (1 of 1)" in lines
    assert "│ password-reset │ card-blocked         │        1 │" in lines
    assert any(line.startswith("never matched at the gate (") for line in lines)
    assert any(line.startswith("worst rules at the gate (") for line in lines)
    assert any(line.startswith("│ ECE ") for line in lines)
    assert "reliability of the confidence (every candidate, no gate)" in lines
    _fits_80_columns(result.out)


def test_eval_json_and_k(run_cli: Run) -> None:
    result = run_cli("rules", "eval", "--rules", RULEBOOK, "--messages", LABELLED, "-k", "2,1", "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert sorted(data) == [
        "accuracy_at_1", "confusions", "ece", "expect_nothing", "gate", "governs_precision", "governs_recall", "k",
        "labelled", "messages", "mrr", "multi_label", "never_matched", "outcomes", "precision", "priority_changed",
        "recall", "recall_at_k", "rejection", "reliability", "rule_count", "rulebook", "rules",
    ]  # fmt: skip
    assert [b["low"] for b in data["reliability"]] == [i / 10 for i in range(10)]
    assert sum(b["candidates"] for b in data["reliability"]) > 9  # every candidate of the 9 messages
    assert 0 <= data["ece"] <= 1
    assert (data["rulebook"], data["rule_count"], data["k"]) == (RULEBOOK, 10, [1, 2])
    assert data["recall_at_k"] == {"1": pytest.approx(6 / 7), "2": 1.0}
    assert data["confusions"] == [{"expected": "password-reset", "took": "card-blocked", "count": 1}]
    assert data["priority_changed"] == []


_PRIORITY_RULEBOOK = """\
rules:
  - id: refund
    condition_text: customer asks for a refund of an order
    action_text: explain the refund policy
    examples: [I want my money back for this order, please refund my purchase, can I return this and get a refund]
  - id: delivery-late
    condition_text: the parcel has not arrived
    action_text: give the tracking link
    examples: [my package hasn't arrived yet, where is my delivery, the courier never delivered my parcel]
  - id: angry-customer
    condition_text: customer is angry or upset
    action_text: apologise first and stay calm
    priority: 100
    examples: ["this is unacceptable, I am furious", I'm really upset with your service, you people are useless]
"""
_PRIORITY_MESSAGES = [
    {"message": "please refund my purchase", "expected": ["refund"]},
    {"message": "I am furious, I want a refund for this order right now", "expected": ["refund"]},
    {"message": "where is my delivery", "expected": ["delivery-late"]},
    {"message": "I'm really upset, my package hasn't arrived yet", "expected": ["delivery-late", "angry-customer"]},
    {"message": "what a lovely day", "expected": []},
]


def test_eval_reports_what_the_matcher_returns_and_where_priority_changed_the_top(run_cli: Run, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(_PRIORITY_RULEBOOK, encoding="utf-8")
    messages = tmp_path / "messages.jsonl"
    messages.write_text("".join(json.dumps(m) + "\n" for m in _PRIORITY_MESSAGES), encoding="utf-8")
    default = run_cli("rules", "eval", "--rules", str(rules), "--messages", str(messages), "--format", "json")
    assert default.code == 0, default.err
    # the default gate returns the rules that govern: angry-customer governs neither message, priority moves nothing
    assert (json.loads(default.out)["recall"], json.loads(default.out)["priority_changed"]) == (1.0, [])
    at = ("--threshold", "0.4")  # a similarity threshold lets angry-customer (0.45) through: priority puts it first
    result = run_cli("rules", "eval", "--rules", str(rules), "--messages", str(messages), "--format", "json", *at)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert (data["gate"]["kind"], data["gate"]["threshold"]) == ("fixed", 0.4)
    # ranked by relevance every top rule is right; as served, priority puts angry-customer first on line 2
    assert (data["accuracy_at_1"], data["recall"]) == (1.0, 0.75)
    assert data["priority_changed"] == [
        {"line": 2, "message": "I am furious, I want a refund for this order right now", "expected": ["refund"],
         "top_by_relevance": "refund", "returned": ["angry-customer", "refund"]},
        {"line": 4, "message": "I'm really upset, my package hasn't arrived yet",
         "expected": ["delivery-late", "angry-customer"], "top_by_relevance": "delivery-late",
         "returned": ["angry-customer", "delivery-late"]},
    ]  # fmt: skip
    table = run_cli("rules", "eval", "--rules", str(rules), "--messages", str(messages), *at)
    lines = [line.rstrip() for line in table.out.splitlines()]
    assert "│ recall         │ 0.750 │ first returned rule expected, of labelled messages │" in lines
    assert "│ priority moved │     2 │ relevance top returned, but not first              │" in lines
    start = lines.index("priority changed the top rule (2 messages)")
    assert lines[start + 4 : start + 6] == [
        "│    2 │ refund           │ angry-customer │ refund                        │",
        "│    4 │ delivery-late    │ angry-customer │ delivery-late, angry-customer │",
    ]
    _fits_80_columns(table.out)


def test_eval_of_a_stored_tenant_reads_the_store(run_cli: Run, tmp_path: Path) -> None:
    db = tmp_path / "norma.db"
    store = open_store(f"sqlite:///{db}")
    try:
        import_rulebook(store, RULEBOOK, tenant_id="acme")
    finally:
        store.close()
    result = run_cli("rules", "eval", "--tenant", "acme", "--db", f"sqlite:///{db}", "--messages", LABELLED,
                     "--format", "json")  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert (data["rulebook"], data["rule_count"], data["accuracy_at_1"]) == ("tenant acme", 10, pytest.approx(6 / 7))
    unknown = run_cli("rules", "doctor", "--tenant", "nobody", "--db", f"sqlite:///{db}")
    assert unknown.code == 2
    assert unknown.err == f"norma: error: tenant 'nobody' has no rules in sqlite:///{db} (check --tenant and --db)\n"


def test_eval_and_doctor_of_a_tenant_write_nothing_to_the_store(run_cli: Run, tmp_path: Path) -> None:
    db = tmp_path / "norma.db"
    store = open_store(f"sqlite:///{db}")
    try:
        import_rulebook(store, RULEBOOK, tenant_id="acme")
        with sqlite3.connect(db) as con:  # as if stored under another model: the tools must embed, and keep nothing
            con.execute("DELETE FROM rule_vectors")
        model = get_embedder().model_id
        assert store.snapshot("acme", model)[2] == {}
        before = (store.version("acme"), db.stat().st_mtime_ns, db.read_bytes())
        for command in (("eval", "--messages", LABELLED), ("doctor",)):
            result = run_cli("rules", *command, "--tenant", "acme", "--db", f"sqlite:///{db}", "--format", "json")
            assert result.code in (0, 1), result.err
        assert (store.version("acme"), db.stat().st_mtime_ns, db.read_bytes()) == before
        assert store.snapshot("acme", model)[2] == {}
        tenant_matcher(store, "acme")  # the service's matcher keeps the vectors it computed: the check above can fail
        assert len(store.snapshot("acme", model)[2]) == 10
    finally:
        store.close()


def test_a_missing_store_is_an_error_and_is_not_created(run_cli: Run, tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    for command in (("eval", "--messages", LABELLED), ("doctor",)):
        result = run_cli("rules", *command, "--tenant", "acme", "--db", f"sqlite:///{db}")
        assert result.code == 2
        assert result.err.startswith(f"norma: error: no store at {db} (")
        assert not db.exists()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--messages", LABELLED), "give the rules: --rules FILE or --tenant TENANT (one of them)"),
        (
            ("--rules", RULEBOOK, "--tenant", "t", "--messages", LABELLED),
            "give the rules: --rules FILE or --tenant TENANT",
        ),
        (("--rules", RULEBOOK, "--db", "sqlite:///x.db", "--messages", LABELLED), "--db goes with --tenant"),
        (("--rules", RULEBOOK, "--messages", LABELLED, "-k", "1,x"), "'1,x' is not a comma-separated list"),
        (("--rules", RULEBOOK, "--messages", LABELLED, "-k", "0"), "every k must be 1 or more"),
        (("--rules", RULEBOOK), "Missing option '--messages'"),
    ],
)
def test_eval_usage_errors_exit_2(run_cli: Run, args: tuple[str, ...], problem: str) -> None:
    result = run_cli("rules", "eval", *args)
    assert result.code == 2
    assert result.err.startswith("norma: error: ")
    assert result.err.count("\n") == 1
    assert problem in result.err


def test_eval_with_a_bad_labelled_line_exits_2_naming_it(run_cli: Run, tmp_path: Path) -> None:
    labelled = tmp_path / "bad.jsonl"
    labelled.write_text('{"message": "hi", "expected": []}\n{"message": "x", "expected": ["nope"]}\n', "utf-8")
    result = run_cli("rules", "eval", "--rules", RULEBOOK, "--messages", str(labelled))
    assert result.code == 2
    assert result.err == (
        f"norma: error: {labelled}:2: unknown rule id(s) 'nope' (expected ids must be rules of the rulebook "
        "evaluated)\n"
    )


def test_doctor_table_exits_1_on_errors(run_cli: Run) -> None:
    result = run_cli("rules", "doctor", "--rules", RULEBOOK)
    assert result.code == 1, result.err
    lines = [line.rstrip() for line in result.out.splitlines()]
    assert lines[:3] == [
        f"{RULEBOOK}: 9 enabled rules",
        "3 error(s), 4 warning(s)",
        "vector scan: exact float32 scan: 29 vectors, below 2,048",  # 10 rule texts (one disabled) + 19 examples
    ]
    assert any(line.startswith("│ warning  │ refund-request has no example: add a few messages users write")
               for line in lines)  # fmt: skip
    assert lines[-6:] == [
        "by kind:",
        "  near_duplicate: 1",
        "  example_closer_to_other_rule: 2",
        "  condition_unrelated: 2",
        "  no_examples: 1",
        "  one_example: 1",
    ]
    _fits_80_columns(result.out)


def test_doctor_json_and_exit_0_without_errors(run_cli: Run) -> None:
    result = run_cli("rules", "doctor", "--rules", str(EXAMPLES / "matching" / "support_rules.yaml"), "--format",
                     "json")  # fmt: skip
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert sorted(data) == [
        "counts", "encoder", "errors", "findings", "near_duplicate", "rulebook", "rules", "vector_scan", "warnings"
    ]  # fmt: skip
    assert data["vector_scan"].startswith("exact float32 scan: ")
    assert (data["errors"], data["near_duplicate"]) == (0, 0.95)
    strict = run_cli("rules", "doctor", "--rules", RULEBOOK, "--near-duplicate", "0.5", "--format", "json")
    assert strict.code == 1
    assert json.loads(strict.out)["counts"]["near_duplicate"] > 1
    assert run_cli("rules", "doctor", "--rules", RULEBOOK, "--near-duplicate", "2").code == 2


def test_eval_at_a_threshold(run_cli: Run) -> None:
    banking = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
    labelled = str(EXAMPLES / "rulebooks" / "banking-support.labelled.jsonl")

    def evaluate(*extra: str) -> dict[str, object]:
        result = run_cli("rules", "eval", "--rules", banking, "--messages", labelled, "--format", "json", *extra)
        assert result.code == 0, result.err
        return json.loads(result.out)  # type: ignore[no-any-return]

    default, low = evaluate(), evaluate("--threshold", "0.2")
    assert (default["gate"]["kind"], default["gate"]["threshold"]) == ("confidence", 0.7)  # type: ignore[index]
    assert (low["gate"]["kind"], low["gate"]["threshold"]) == ("fixed", 0.2)  # type: ignore[index]
    # a low similarity threshold lets more rules through: fewer messages that expect none are left unmatched; the
    # ranking figures do not move
    assert low["rejection"] <= default["rejection"]  # type: ignore[operator]
    assert (low["accuracy_at_1"], low["mrr"]) == (default["accuracy_at_1"], default["mrr"])
