from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import get_embedder
from norma.matching import load_rules
from norma.rules import rule_texts
from tests.conftest import EXAMPLES, CliResult

RULES = str(EXAMPLES / "matching" / "support_rules.yaml")
pytestmark = pytest.mark.model


def test_table_with_breakdown(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, "I want my money back")
    assert result.code == 0
    assert "refund-request" in result.out
    assert "hybrid" in result.out
    assert "ex.0: I" in result.out


def test_json_and_session_options(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli(
        "match", "--rules", RULES, "my package never arrived", "--scenario", "delivery", "--format", "json"
    )
    assert result.code == 0
    data = json.loads(result.out)
    assert data["matches"][0]["rule_id"] == "delivery-missing"
    assert data["matches"][0]["explanation"]["matched_example"] == 0
    assert "dropped" not in data


def test_explain_and_fired(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, "hello", "--fired", "greeting", "--explain", "--format", "json")
    data = json.loads(result.out)
    assert result.code == 1
    assert data["matches"] == []
    reasons = {d["rule_id"]: d["reason"] for d in data["dropped"]}
    assert reasons["greeting"] == "max_fires_per_session"


TWO_INTENTS = "my card was stolen and I want a refund"
"""lost-card governs it (similarity 0.788); refund-request matches only as a neighbour (0.567)."""


def _fits_80_columns(text: str) -> None:
    assert max(len(line) for line in text.splitlines() if line[:1] in "┏┃┡│└") <= 80


def test_the_table_says_which_matches_govern_the_turn(
    run_cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    # a similarity threshold is the gate alone: a rule it lets through that does not govern is a neighbour
    result = run_cli("match", "--rules", RULES, TWO_INTENTS, "--explain", "--threshold", "0.5")
    assert result.code == 0, result.err
    lines = [line.rstrip() for line in result.out.splitlines()]
    top = next(i for i, line in enumerate(lines) if line.startswith("│ lost-card "))
    neighbour = next(i for i, line in enumerate(lines) if line.startswith("│ refund-request "))
    assert lines[top + 1].startswith("│ governs 0.94 ")
    assert lines[neighbour + 1].startswith("│ neighbour 0.07 ")
    at = lines.index("governs the turn (a turn check applies its requirements) from a confidence of 0.7:")
    assert lines[at + 1 : at + 3] == [
        "  lost-card: enforced (governs): confidence 0.94 >= 0.7 that it governs the message",
        "  refund-request: not enforced (neighbour): confidence 0.07 < 0.7 that it governs the message",
    ]
    _fits_80_columns(result.out)
    plain = run_cli("match", "--rules", RULES, TWO_INTENTS, "--threshold", "0.5")  # the label without --explain
    assert "│ neighbour 0.07 " in plain.out
    assert "governs the turn" not in plain.out
    default = run_cli("match", "--rules", RULES, TWO_INTENTS)  # the default gate returns the rules that govern
    assert "│ lost-card " in default.out
    assert "refund-request" not in default.out


def test_json_carries_the_enforcement_of_each_match(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, TWO_INTENTS, "--format", "json", "--threshold", "0.5")
    assert result.code == 0, result.err
    matches = json.loads(result.out)["matches"]
    assert [list(m) for m in matches] == [
        ["rule_id", "similarity_score", "bm25_score", "final_score", "enforcement", "explanation", "rule"]
    ] * 2
    assert [(m["rule_id"], m["enforcement"]["reason"], m["enforcement"]["enforced"]) for m in matches] == [
        ("lost-card", "governs", True),
        ("refund-request", "neighbour", False),
    ]
    assert [round(m["enforcement"]["confidence"], 2) for m in matches] == [0.94, 0.07]
    assert [m["enforcement"]["detail"] for m in matches] == [
        "confidence 0.94 >= 0.7 that it governs the message",
        "confidence 0.07 < 0.7 that it governs the message",
    ]
    assert (round(matches[0]["similarity_score"], 3), round(matches[1]["similarity_score"], 3)) == (0.788, 0.567)


def test_two_rules_can_both_govern_and_ids_are_shown_as_written(
    run_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = tmp_path / "twins.yaml"
    twin = {"condition_text": "customer reports a stolen card", "examples": ["my card was stolen"]}
    book.write_text(json.dumps({"rules": [{"id": "card-stolen", **twin}, {"id": "[dim]twin", **twin}]}), "utf-8")
    monkeypatch.setenv("COLUMNS", "80")
    result = run_cli("match", "--rules", str(book), "my card was stolen", "--explain")
    assert result.code == 0, result.err
    lines = [line.rstrip() for line in result.out.splitlines()]
    rows = [i for i, line in enumerate(lines) if line.startswith("│ ") and "│ ex.0:" in line]
    labels = {lines[i].split("│")[1].strip(): lines[i + 1].split("│")[1].strip() for i in rows}
    assert labels == {"[dim]twin": "governs 0.96", "card-stolen": "governs 0.83"}  # per rule, not a share of one
    assert "  card-stolen: enforced (governs): confidence 0.83 >= 0.7 that it governs the message" in lines


def test_the_batch_table_marks_the_neighbours(
    run_cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = tmp_path / "messages.txt"
    messages.write_text(f"{TWO_INTENTS}\nI want my money back\n", encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "200")
    result = run_cli("match", "--batch", str(messages), "--rules", RULES, "--engine", "local", "--threshold", "0.5")
    assert result.code == 0, result.err
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in result.out.splitlines() if line.startswith("│")]
    assert rows == [
        ["1", TWO_INTENTS, "lost-card (governs 0.94), refund-request (neighbour 0.07)"],  # as norma match labels them
        ["2", "I want my money back", "refund-request (governs 1.00)"],
    ]


def test_no_match_exits_1(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, "what is the capital of France?")
    assert result.code == 1
    assert "no rule matches" in result.out


def test_bad_input_exits_2(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [{id: r}]", encoding="utf-8")
    result = run_cli("match", "--rules", str(bad), "hello")
    assert result.code == 2
    assert "condition_text" in result.err
    assert run_cli("match", "--rules", RULES, "x", "--fired", "a:b").code == 2


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def _cached_rows(cache_dir: Path) -> list[tuple[bytes, bytes]]:
    with sqlite3.connect(cache_dir / "embeddings" / "vectors.sqlite3") as db:
        return [(bytes(k), bytes(v)) for k, v in db.execute("SELECT text_sha256, vector FROM embeddings")]


def test_rule_vectors_are_cached_across_runs_and_messages_are_not(
    run_cli: Callable[..., CliResult], cache_dir: Path
) -> None:
    first = run_cli("match", "--rules", RULES, "please refund my last order", "--format", "json")
    assert first.code == 0
    texts = {t for rule in load_rules(RULES) for t in rule_texts(rule)}
    rows = _cached_rows(cache_dir)
    assert {k for k, _ in rows} == {text_key(t) for t in texts}
    assert "please refund my last order" not in texts
    # the second run reads the rule vectors from the file's snapshot: poison them with the message's own vector and
    # every rule becomes a perfect vector match
    (snapshot,) = (cache_dir / "rulebooks").iterdir()
    assert b"please refund my last order" not in b"".join(p.read_bytes() for p in snapshot.iterdir())
    message = get_embedder().embed(["what is the capital of France?"])[0].astype(np.float32)
    np.save(snapshot / "vectors.npy", np.tile(message, (len(rows), 1)))
    second = json.loads(run_cli("match", "--rules", RULES, "what is the capital of France?", "--format", "json").out)
    assert second["matches"]
    assert all(m["similarity_score"] == pytest.approx(1.0, abs=1e-5) for m in second["matches"])


def test_match_a_stored_tenant(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/m.db"
    assert run_cli("rules", "import", RULES, "--tenant", "shop", "--db", url).code == 0
    stored = json.loads(
        run_cli("match", "I want my money back", "--tenant", "shop", "--db", url, "--format", "json").out
    )
    from_file = json.loads(run_cli("match", "--rules", RULES, "I want my money back", "--format", "json").out)
    assert stored["tenant"] == "shop"
    assert stored["rules"] == from_file["rules"]
    assert [m["rule_id"] for m in stored["matches"]] == [m["rule_id"] for m in from_file["matches"]]
    assert stored["matches"][0]["rule_id"] == "refund-request"
    ghost = run_cli("match", "hello", "--tenant", "ghost", "--db", url)
    assert ghost.code == 2
    assert ghost.err == (
        f"norma: error: tenant 'ghost' has no rules in {url} (import them with norma rules import FILE --tenant "
        "ghost, or check --db)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("match", "--rules", RULES, ""),
            "norma: error: MESSAGE is empty: give the text to match, such as norma match --rules FILE 'hello'\n",
        ),
        (
            ("match", "--rules", RULES, "  "),
            "norma: error: MESSAGE is empty: give the text to match, such as norma match --rules FILE 'hello'\n",
        ),
        (
            ("match", "--rules", RULES, "hi", "--threshold", "2"),
            "norma: error: Invalid value for '--threshold': 2.0 is not in the range 0.0<=x<=1.0.\n",
        ),
        (
            ("match", "hi"),
            "norma: error: give the rules: --rules FILE or --tenant TENANT (one of them)\n",
        ),
        (
            ("match", "--rules", RULES, "--tenant", "t", "hi"),
            "norma: error: give the rules: --rules FILE or --tenant TENANT (one of them)\n",
        ),
        (
            ("match", "--rules", RULES, "--db", "sqlite:////tmp/x.db", "hi"),
            "norma: error: --db goes with --tenant (a --rules file needs no store)\n",
        ),
    ],
)
def test_usage_errors(run_cli: Callable[..., CliResult], args: tuple[str, ...], message: str) -> None:
    result = run_cli(*args)
    assert (result.code, result.out, result.err) == (2, "", message)


def test_the_default_gate_is_named_and_nothing_is_measured_for_it(
    run_cli: Callable[..., CliResult], cache_dir: Path
) -> None:
    banking = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
    first = json.loads(
        run_cli("match", "--rules", banking, "my bank card went missing yesterday", "--format", "json").out
    )
    assert {k: first["gate"][k] for k in ("kind", "score", "threshold")} == {
        "kind": "confidence", "score": "confidence", "threshold": 0.7,
    }  # fmt: skip
    assert first["matches"]
    assert all(m["enforcement"]["enforced"] for m in first["matches"])
    (snapshot,) = (cache_dir / "rulebooks").iterdir()
    assert sorted(p.name for p in snapshot.iterdir()) == ["confidence.json", "rules.json", "vectors.npy"]


def test_match_a_batch_against_a_stored_tenant(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    url = f"sqlite:///{db}"
    assert run_cli("rules", "import", RULES, "--tenant", "shop", "--db", url).code == 0
    messages = tmp_path / "messages.txt"
    messages.write_text("I want my money back\nwhere is my parcel\nhello there\n", encoding="utf-8")
    batch = ("match", "--batch", str(messages), "--format", "json", "--engine", "local")
    from_file = json.loads(run_cli(*batch, "--rules", RULES).out)
    with sqlite3.connect(db) as con:  # vectors of another model only: the workers embed, and write nothing back
        con.execute("DELETE FROM rule_vectors")
    before = db.read_bytes()
    result = run_cli(*batch, "--tenant", "shop", "--db", url)
    assert result.code == 0, result.err
    stored = json.loads(result.out)
    assert (stored["tenant"], stored["rules"], stored["messages"]) == ("shop", from_file["rules"], 3)
    assert "tenant" not in from_file
    for got, want in zip(stored["results"], from_file["results"], strict=True):
        assert [(m["rule_id"], round(m["final_score"], 4)) for m in got["matches"]] == [
            (m["rule_id"], round(m["final_score"], 4)) for m in want["matches"]
        ]
    assert stored["results"][0]["matches"][0]["rule_id"] == "refund-request"
    assert db.read_bytes() == before
    ghost = run_cli("match", "--batch", str(messages), "--tenant", "ghost", "--db", url)
    assert ghost.code == 2
    assert ghost.err == (
        f"norma: error: tenant 'ghost' has no rules in {url} (import them with norma rules import FILE --tenant "
        "ghost, or check --db)\n"
    )


def test_a_tenant_batch_applies_the_calibrated_gate_and_is_pinned_to_its_version(tmp_path: Path) -> None:
    from norma.batch import MatchJob
    from norma.errors import ConflictError, NotFoundError
    from norma.store import import_rulebook, open_store

    url = f"sqlite:///{tmp_path}/m.db"
    store = open_store(url)
    try:
        import_rulebook(store, RULES, tenant_id="shop")
        store.save_gate(
            "shop", {"kind": "calibrated", "score": "similarity", "threshold": 0.3, "terms": {"target": "best_f1"}}
        )
        job = MatchJob.for_tenant("shop", url)
        assert (job.tenant_id, job.tenant_version, job.rule_count()) == ("shop", store.version("shop"), 6)
        work = job.start()
        (found, error), *_ = work([{"message": "please give me a refund", "session": None}])
        assert error is None
        assert (found["gate"]["kind"], found["gate"]["threshold"]) == ("calibrated", 0.3)
        # the target's similarity threshold is the gate alone: rules that do not govern pass it too (neighbours)
        assert found["matches"][0]["rule_id"] == "refund-request"
        assert found["matches"][0]["enforcement"]["enforced"]
        assert len(found["matches"]) > 1
        assert all(m["similarity_score"] >= 0.3 for m in found["matches"])
        rule = store.get_rule("shop", "refund-request")
        store.upsert_rules("shop", [rule.model_copy(update={"priority": rule.priority + 1})])
        with pytest.raises(ConflictError, match=r"tenant 'shop' moved from version \d+ to \d+ while the batch ran"):
            job.start()
    finally:
        store.close()
    with pytest.raises(NotFoundError, match="no store at"):
        MatchJob.for_tenant("shop", f"sqlite:///{tmp_path}/none.db")


def test_a_tenant_batch_keeps_the_threshold_of_its_config(tmp_path: Path) -> None:
    from norma.batch import MatchJob
    from norma.matching import MatchConfig
    from norma.store import import_rulebook, open_store

    url = f"sqlite:///{tmp_path}/m.db"
    banking = EXAMPLES / "rulebooks" / "banking-support.yaml"
    store = open_store(url)
    try:
        import_rulebook(store, banking, tenant_id="northwind-bank")
    finally:
        store.close()
    message = [{"message": "how do I close my account", "session": None}]
    (found, error), *_ = MatchJob.for_tenant("northwind-bank", url).start()(message)
    assert error is None
    assert (found["gate"]["kind"], found["gate"]["threshold"]) == ("confidence", 0.7)
    # a job whose config sets its own threshold keeps it, across the worker's JSON
    (own, _), *_ = MatchJob.for_tenant("northwind-bank", url, MatchConfig(threshold=0.3)).start()(message)
    assert (own["gate"]["kind"], own["gate"]["threshold"]) == ("fixed", 0.3)
    assert len(own["matches"]) >= len(found["matches"])


def test_the_gate_quantile_is_gone(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("match", "--rules", RULES, "hello", "--gate-quantile", "0.2")
    assert result.code == 2
    assert "No such option '--gate-quantile'" in result.err
