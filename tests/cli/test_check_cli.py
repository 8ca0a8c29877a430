"""``norma check`` through the real CLI: one turn, its reports, usage errors, a stored tenant, ``--batch``, shards and
``norma merge``, and awkward outputs (Unicode, empty, 100,000 characters).

Verdicts are worked out from the checks of examples/rulebooks/banking-support.yaml: fraud-suspected (offers-freeze
error, hands-over-to-fraud-team warning), never-ask-full-pin (warns-never-share warning, does-not-ask-for-secrets
error, no-card-number error ``when: always``), vulnerable-customer (mentions-hardship-help, no-pressure) and
complaint (gives-deadline, gives-reference warning). ``GOOD`` satisfies every one of them, whichever rules match.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, REPO, CliResult

pytestmark = pytest.mark.model

Run = Callable[..., CliResult]
BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
TURNS = EXAMPLES / "turns" / "banking.jsonl"
GOOD = (
    "I have frozen your card and passed this to our fraud team. Never share your PIN with anyone. "
    "If money is tight, our hardship team and free debt advice can help. "
    "A complaint gets an answer within eight weeks, reference CMP-482913."
)
PIN_MESSAGE = "my pin is 1234 can you check it"
NEIGHBOURS = ("--threshold", "0.4")
"""A similarity threshold: the gate alone, so rules under the confidence that governs pass it as neighbours."""
CARD = "4111 1111 1111 1111"


def check(run_cli: Run, *args: str) -> CliResult:
    return run_cli("check", "--rules", BANKING, *args)


def failed(payload: dict[str, Any]) -> set[str]:
    return {f"{c['rule_id']}/{c['check_id']}" for r in payload["rules"] for c in r["checks"] if c["status"] == "fail"}


# --- one turn -----------------------------------------------------------------------------------------------------


def test_a_good_answer_passes_with_exit_0(run_cli: Run) -> None:
    result = check(run_cli, "-m", PIN_MESSAGE, "-o", GOOD, "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["verdict"] == "pass"
    assert payload["reward"] == 1.0
    assert failed(payload) == set()
    assert payload["counts"]["fail"] == 0
    assert payload["counts"]["pass"] >= 3  # the three checks of never-ask-full-pin at least


def test_asking_for_the_pin_fails_with_exit_1(run_cli: Run) -> None:
    result = check(run_cli, "-m", PIN_MESSAGE, "-o", "Sure, please confirm your PIN so I can check it.")
    assert result.code == 1
    assert "verdict: FAIL" in result.out
    payload = json.loads(check(run_cli, "-m", PIN_MESSAGE, "-o", "Please confirm your PIN.", "--format", "json").out)
    assert payload["name"] == "<output>"  # no file holds an inline output
    assert payload["verdict"] == "fail"
    assert payload["matches"][0]["rule_id"] == "never-ask-full-pin"
    assert failed(payload) == {"never-ask-full-pin/does-not-ask-for-secrets", "never-ask-full-pin/warns-never-share"}
    pin = next(r for r in payload["rules"] if r["rule_id"] == "never-ask-full-pin")
    assert pin["matched"] is True
    assert pin["verdict"] == "fail"
    assert pin["required"] is True
    # weights 1 (warning, fail) + 1 (error, fail) + 3 (no-card-number, pass): the rule scores 3/5
    assert pin["score"] == pytest.approx(0.6)
    assert payload["reward"] == pytest.approx(0.6)
    assert payload["counts"] == {"pass": 1, "fail": 2, "skip": 0}


def test_fail_on_warning(run_cli: Run) -> None:
    # only the warning check of never-ask-full-pin fails: nothing asks for the PIN, nothing warns never to share it
    answer = "I cannot look at PINs in the chat. A complaint gets an answer within eight weeks."
    plain = check(run_cli, "-m", PIN_MESSAGE, "-o", answer, "--format", "json")
    assert plain.code == 0, plain.out
    assert failed(json.loads(plain.out)) == {"never-ask-full-pin/warns-never-share"}
    assert json.loads(plain.out)["verdict"] == "pass"
    strict = check(run_cli, "-m", PIN_MESSAGE, "-o", answer, "--format", "json", "--fail-on", "warning")
    assert strict.code == 1
    assert json.loads(strict.out)["verdict"] == "pass"  # the verdict stays the error checks'


def test_output_file_and_sarif_region_at_the_evidence(run_cli: Run, tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text(f"Hello.\n\nThe card {CARD} has a balance of 12 GBP.\n", encoding="utf-8")
    result = check(
        run_cli, "-m", "what is the balance on my account", "--output-file", str(answer), "--format", "sarif"
    )
    assert result.code == 1
    log = json.loads(result.out)
    card = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "never-ask-full-pin/no-card-number")
    physical = card["locations"][0]["physicalLocation"]
    assert physical["region"] == {"startLine": 3, "startColumn": 10}
    assert physical["artifactLocation"]["uri"].endswith("answer.txt")
    assert card["properties"]["evidence"].endswith("1111")  # masked: the report never repeats the number
    assert CARD not in result.out
    assert CARD.replace(" ", "") not in result.out
    assert card["level"] == "error"
    assert log["runs"][0]["properties"]["reports"][0]["name"] == str(answer)


def test_reports_are_written_alongside(run_cli: Run, tmp_path: Path) -> None:
    sarif, junit, markdown, js = (tmp_path / n for n in ("c.sarif", "c.xml", "c.md", "c.json"))
    result = check(
        run_cli,
        *("-m", PIN_MESSAGE, "-o", "Please confirm your PIN."),
        *("--report", f"sarif={sarif}", "--report", f"junit={junit}", "--report", f"markdown={markdown}"),
        *("--report", f"json={js}", "--format", "json"),
    )
    assert result.code == 1
    assert json.loads(js.read_text("utf-8")) == json.loads(result.out)
    assert {r["ruleId"] for r in json.loads(sarif.read_text("utf-8"))["runs"][0]["results"]} == {
        "never-ask-full-pin/does-not-ask-for-secrets",
        "never-ask-full-pin/warns-never-share",
    }
    root = ET.fromstring(junit.read_text("utf-8"))
    (suite,) = root.findall("testsuite")
    (failure,) = suite.iter("failure")
    assert "[error] never-ask-full-pin/does-not-ask-for-secrets" in (failure.text or "")
    assert "line 1, column 8: [error] never-ask-full-pin/does-not-ask-for-secrets" in (failure.text or "")
    text = markdown.read_text("utf-8")
    assert "never-ask-full-pin/does-not-ask-for-secrets | error" in text
    assert "warns-never-share" not in text  # a warning does not fail the turn under --fail-on error


def test_a_bad_report_spec_is_a_usage_error(run_cli: Run) -> None:
    result = check(run_cli, "-m", "x", "-o", "y", "--report", "pdf=out.pdf")
    assert result.code == 2
    assert "FORMAT=FILE" in result.err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--rules", BANKING, "--tenant", "t", "-m", "x", "-o", "y"], "--rules"),
        (["-m", "x", "-o", "y"], "--rules"),
        (["--rules", BANKING, "-o", "y"], "--message"),
        (["--rules", BANKING, "-m", "x"], "--output"),
        (["--rules", BANKING, "-m", "x", "-o", "y", "--output-file", BANKING], "--output"),
        (["--rules", BANKING, "-m", "x", "-o", "y", "--session", "{not json"], "--session"),
        (["--rules", BANKING, "-m", "x", "-o", "y", "--session", "[1]"], "--session"),
        (["--rules", BANKING, "-m", "x", "-o", "y", "--format", "jsonl"], "--batch"),
    ],
)
def test_usage_errors_exit_2_with_one_line(run_cli: Run, args: list[str], says: str) -> None:
    result = run_cli("check", *args)
    assert result.code == 2
    assert result.out == ""
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    assert says in lines[0]


def test_a_session_is_taken(run_cli: Run) -> None:
    session = json.dumps({"turn": 3, "fire_counts": {}})
    result = check(run_cli, "-m", PIN_MESSAGE, "-o", GOOD, "--session", session, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["verdict"] == "pass"


def test_a_stored_tenant(run_cli: Run, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/bank.db"
    assert run_cli("rules", "import", BANKING, "--db", url).code == 0
    args = ("-m", PIN_MESSAGE, "-o", "Please confirm your PIN.", "--format", "json")
    stored = run_cli("check", "--tenant", "northwind-bank", "--db", url, *args)
    from_file = check(run_cli, *args)
    assert stored.code == from_file.code == 1
    one, two = json.loads(stored.out), json.loads(from_file.out)
    assert one["tenant_id"] == "northwind-bank"
    assert one["rules_version"] == 1
    assert two["rules_version"] is None
    assert one["verdict"] == two["verdict"] == "fail"
    assert failed(one) == failed(two)
    assert one["reward"] == pytest.approx(two["reward"])
    missing = run_cli("check", "--tenant", "nobody", "--db", url, *args)
    assert missing.code == 2
    assert "nobody" in missing.err


# --- a neighbour's requirements --------------------------------------------------------------------------------

PASSWORD = "here is my online banking password"
PASSWORD_ANSWER = (
    "Please never share your password or PIN in the chat, not even with the bank. I have not stored it. "
    "You can reset your password in the app."
)
"""examples/turns/banking.jsonl's good-pin turn: never-ask-full-pin governs it; fraud-suspected (two ``contains``
requirements) matches only as a neighbour."""
NEIGHBOUR = (
    "the rule matched only as a neighbour (confidence 0.02 < 0.7 that it governs the message): "
    "a requirement applies when the rule governs the turn"
)


def _records_of(text: str) -> list[dict[str, str]]:
    """The check table printed as records (a narrow terminal): one ``header: value`` per line, a blank between."""
    records = []
    for block in text.split("\n\n"):
        record: dict[str, str] = {}
        last = ""
        for line in block.splitlines():
            if line.startswith("  "):
                record[last] += " " + line.strip()
            elif ": " in line or line.endswith(":"):
                last, _, value = line.partition(":")
                record[last] = value.strip()
        if "check" in record:
            records.append(record)
    return records


def test_the_table_shows_a_neighbours_requirements_as_skipped_not_as_problems(
    run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    # a similarity threshold (the gate alone) returns rules that do not govern: neighbours
    result = check(run_cli, "-m", PASSWORD, "-o", PASSWORD_ANSWER, "--all", *NEIGHBOURS)  # passing checks too
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    # the header names the confidence the reasons give (0.02 in NEIGHBOUR), as norma match labels it
    assert lines[0].startswith("matched never-ask-full-pin (governs 1.00), fraud-suspected (neighbour 0.02), ")
    rows = {(r["rule"], r["check"]): (r["status"], r["message"]) for r in _records_of(result.out)}
    assert rows[("fraud-suspected (neighbour)", "offers-freeze")] == ("skip", NEIGHBOUR)
    assert rows[("fraud-suspected (neighbour)", "hands-over-to-fraud-team")] == ("skip", NEIGHBOUR)
    assert rows[("never-ask-full-pin", "no-card-number")] == ("pass", "no card number found")
    assert (
        lines[-1] == "verdict: PASS, reward 1.000 (3 passed, 0 failed, 2 skipped, 2 of them a neighbour's requirements)"
    )


def test_outside_a_terminal_the_table_lists_what_did_not_pass_with_masked_evidence(
    run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    answer = f"Sure, tell me your card {CARD} and your full PIN."
    result = check(run_cli, "-m", PIN_MESSAGE, "-o", answer)  # captured: not a terminal
    assert result.code == 1, result.err
    rows = {(r["rule"], r["check"]): (r["status"], r["message"]) for r in _records_of(result.out)}
    assert all(status != "pass" for status, _ in rows.values())  # passing checks are left out
    status, message = rows[("never-ask-full-pin", "no-card-number")]
    assert status == "fail"
    assert message.endswith(': "**** **** **** 1111"')  # the evidence, masked as in every format
    assert CARD not in result.out
    assert result.out.splitlines()[-1].startswith("verdict: FAIL, reward ")
    every = check(run_cli, "-m", PIN_MESSAGE, "-o", answer, "--all")
    assert any(r["status"] == "pass" for r in _records_of(every.out))


def test_json_says_which_rules_and_checks_are_enforced(run_cli: Run) -> None:
    default = json.loads(check(run_cli, "-m", PASSWORD, "-o", PASSWORD_ANSWER, "--format", "json").out)
    assert [(m["rule_id"], m["enforced"]) for m in default["matches"]] == [("never-ask-full-pin", True)]
    assert (default["verdict"], default["counts"]) == ("pass", {"pass": 3, "fail": 0, "skip": 0})
    result = check(run_cli, "-m", PASSWORD, "-o", PASSWORD_ANSWER, "--format", "json", *NEIGHBOURS)
    payload = json.loads(result.out)
    assert [(m["rule_id"], m["enforced"], m["enforcement"]["reason"]) for m in payload["matches"]] == [
        ("never-ask-full-pin", True, "governs"),
        ("fraud-suspected", False, "neighbour"),
        ("scam-warning", False, "neighbour"),
        ("lost-or-stolen-card", False, "neighbour"),
    ]
    assert payload["matches"][1]["enforcement"]["detail"] == "confidence 0.02 < 0.7 that it governs the message"
    rules = {r["rule_id"]: r for r in payload["rules"]}
    assert (rules["never-ask-full-pin"]["enforced"], rules["fraud-suspected"]["enforced"]) == (True, False)
    assert [(c["check_id"], c["status"], c["enforced"]) for c in rules["fraud-suspected"]["checks"]] == [
        ("offers-freeze", "skip", False),
        ("hands-over-to-fraud-team", "skip", False),
    ]
    assert (payload["verdict"], payload["counts"]) == ("pass", {"pass": 3, "fail": 0, "skip": 2})


def test_a_check_message_is_printed_as_written(run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    book = tmp_path / "ref.yaml"
    rule = {
        "id": "[bold]ref",
        "condition_text": "customer asks for a reference number",
        "examples": ["what is my reference number"],
        "checks": [{"id": "gives-[a-z]-ref", "kind": "regex", "pattern": "REF-[a-z]+"}],
    }
    book.write_text(json.dumps({"rules": [rule]}), encoding="utf-8")
    result = run_cli("check", "--rules", str(book), "-m", "what is my reference number", "-o", "no idea")
    assert result.code == 1, result.err
    assert "│ [bold]ref │ gives-[a-z]-ref │ regex │" in result.out  # not read as markup
    assert "REF-[a-z]+" in result.out


def test_reports_leave_a_neighbours_requirements_out_of_the_problems(run_cli: Run) -> None:
    batch = ("--batch", str(TURNS), "--engine", "local", *NEIGHBOURS)
    document = json.loads(check(run_cli, *batch, "--format", "json").out)
    neighbours = {
        (row["line"], f"{c['rule_id']}/{c['check_id']}")
        for row in document["results"]
        for r in row["rules"]
        for c in r["checks"]
        if not c["enforced"]
    }
    assert (4, "fraud-suspected/offers-freeze") in neighbours  # good-pin
    assert len({line for line, _ in neighbours}) == 5  # the five turns with a neighbour that has requirements
    failed_checks = {(row["line"], check) for row in document["results"] for check in failed(row)}
    sarif = json.loads(check(run_cli, *batch, "--format", "sarif").out)
    results = {
        (int(r["properties"]["record"].rsplit(":", 1)[1]), r["ruleId"])
        for r in sarif["runs"][0]["results"]
        if "record" in r["properties"]
    }
    assert results == failed_checks  # every failed check, and nothing skipped
    assert not results & neighbours
    markdown = check(run_cli, *batch, "--format", "markdown").out
    lines = [line.split(" | ") for line in markdown.splitlines() if line.startswith(f"| {TURNS} |")]
    rows = {(int(cells[1]), cells[2]) for cells in lines}
    assert rows
    assert rows <= failed_checks
    assert not rows & neighbours
    assert "neighbour" not in markdown
    root = ET.fromstring(check(run_cli, *batch, "--format", "junit").out)
    good_pin = root.findall("testsuite")[3]
    case = next(c for c in good_pin.iter("testcase") if c.get("name") == "fraud-suspected")
    assert case.find("failure") is None
    (skipped,) = case.findall("skipped")
    assert skipped.get("message") == NEIGHBOUR  # once, for its two requirements
    assert (good_pin.get("failures"), good_pin.get("skipped")) == ("0", "1")


# --- --batch ------------------------------------------------------------------------------------------------------


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TURNS.read_text("utf-8").splitlines()]


@pytest.fixture(scope="module")
def single_verdicts() -> dict[str, tuple[str, set[str]]]:
    """Each example turn checked on its own with the one-turn command (the CLI in-process)."""
    from norma.cli import main

    found: dict[str, tuple[str, set[str]]] = {}
    for record in _records():
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            main(["check", "--rules", BANKING, "-m", record["message"], "-o", record["output"], "--format", "json"])
        payload = json.loads(buffer.getvalue())
        found[record["id"]] = (payload["verdict"], failed(payload))
    return found


def test_batch_json_equals_the_one_turn_command(run_cli: Run, single_verdicts: dict[str, Any]) -> None:
    result = check(run_cli, "--batch", str(TURNS), "--format", "json", "--engine", "local")
    assert result.code == 1, result.err
    document = json.loads(result.out)
    assert document["turns"] == 8
    assert (document["records"], document["bad"]) == (8, 0)
    assert document["rules"] == 28
    assert [row["line"] for row in document["results"]] == list(range(1, 9))
    assert {row["id"]: (row["verdict"], failed(row)) for row in document["results"]} == single_verdicts
    assert document["passed"] == sum(v == "pass" for v, _ in single_verdicts.values())
    assert document["failed"] == sum(v == "fail" for v, _ in single_verdicts.values())
    # the turns whose verdicts do not depend on which secondary rules match
    assert single_verdicts["bad-asks-for-pin"][0] == "fail"
    assert "never-ask-full-pin/no-card-number" in single_verdicts["bad-prints-card"][1]
    assert single_verdicts["good-complaint"] == ("pass", set())


def test_batch_jsonl(run_cli: Run, single_verdicts: dict[str, Any]) -> None:
    result = check(run_cli, "--batch", str(TURNS), "--format", "jsonl", "--engine", "local")
    assert result.code == 1
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert [row["line"] for row in rows] == list(range(1, 9))
    assert {row["id"]: (row["verdict"], failed(row)) for row in rows} == single_verdicts
    assert all(row["failing"] == (row["verdict"] == "fail") for row in rows)


def test_batch_report_json_is_the_format_json_document(run_cli: Run, tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    result = check(
        run_cli, "--batch", str(TURNS), "--format", "json", "--engine", "local", "--report", f"json={report}"
    )
    assert json.loads(report.read_text("utf-8")) == json.loads(result.out)


def test_batch_with_bad_lines_exits_2_and_keeps_the_others(run_cli: Run, tmp_path: Path) -> None:
    batch = _lines(
        tmp_path / "turns.jsonl",
        json.dumps({"message": PIN_MESSAGE, "output": GOOD}),
        "{not json",
        json.dumps({"message": PIN_MESSAGE}),
        json.dumps({"message": PIN_MESSAGE, "output": "x", "colour": "red"}),
        json.dumps({"message": PIN_MESSAGE, "output": "Please confirm your PIN."}),
    )
    result = check(run_cli, "--batch", str(batch), "--format", "jsonl", "--engine", "local")
    assert result.code == 2
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert [(row["line"], row["verdict"]) for row in rows] == [(1, "pass"), (5, "fail")]
    errors = [line for line in result.err.splitlines() if line.startswith("norma: error:")]
    assert len(errors) == 3
    for error, number in zip(errors, (2, 3, 4), strict=True):
        assert error.startswith(f"norma: error: {batch}:{number}"), error
    assert "not valid JSON" in errors[0]
    assert "output" in errors[1]
    assert "colour" in errors[2]


def _lines(path: Path, *lines: str) -> Path:
    """``path`` holding ``lines``, one a line."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _with_bad_lines(tmp_path: Path) -> Path:
    """Five records: line 1 passes, 2-3 are bad (not JSON; no output), line 4 (blank) is none, 5 fails."""
    return _lines(
        tmp_path / "mixed.jsonl",
        json.dumps({"message": PIN_MESSAGE, "output": GOOD}),
        "{not json",
        json.dumps({"message": PIN_MESSAGE}),
        "   ",
        json.dumps({"message": PIN_MESSAGE, "output": "Please confirm your PIN."}),
    )


def test_the_batch_totals_count_every_record_the_bad_ones_too(run_cli: Run, tmp_path: Path) -> None:
    batch = _with_bad_lines(tmp_path)
    table = check(run_cli, "--batch", str(batch), "--engine", "local")
    assert table.code == 2  # a bad record wins over the failed turn, as before
    assert table.out.splitlines()[-1] == "4 records: 1 passed, 1 failed, 0 skipped, 2 bad"
    errors = [line for line in table.err.splitlines() if line.startswith("norma: error:")]
    assert len(errors) == 2
    assert errors[0].startswith(f"norma: error: {batch}:2:2: not valid JSON: "), errors
    assert errors[1].startswith(f"norma: error: {batch}:3: "), errors
    document_run = check(run_cli, "--batch", str(batch), "--engine", "local", "--format", "json")
    assert document_run.code == 2
    document = json.loads(document_run.out)
    totals = {key: document[key] for key in ("records", "turns", "passed", "failed", "skipped", "bad")}
    assert totals == {"records": 4, "turns": 2, "passed": 1, "failed": 1, "skipped": 0, "bad": 2}
    assert [row["line"] for row in document["results"]] == [1, 5]
    assert document["mean_reward"] == pytest.approx((1.0 + 0.6) / 2)


def test_the_merged_shards_add_up_their_bad_records(run_cli: Run, tmp_path: Path) -> None:
    batch = _with_bad_lines(tmp_path)  # 4 records: shard 1/2 is lines 1-2 (one bad), shard 2/2 lines 3 and 5
    whole = check(run_cli, "--batch", str(batch), "--engine", "local", "--format", "json")
    parts = []
    for i in (1, 2):
        shard = check(run_cli, "--batch", str(batch), "--engine", "local", "--format", "json", "--shard", f"{i}/2")
        assert shard.code == 2, shard.err  # each shard has one bad record
        assert json.loads(shard.out)["bad"] == 1
        part = tmp_path / f"part{i}.json"
        part.write_text(shard.out, encoding="utf-8")
        parts.append(str(part))
    merged = run_cli("merge", *parts)
    assert json.loads(merged.out) == json.loads(whole.out)
    assert json.loads(merged.out)["bad"] == 2


def _no_turns(source: str, stdin: bool = False) -> str:
    what, todo = ("the input", "check what is piped in") if stdin else ("the file", "check the path")
    return (
        f"norma: error: {source}: no turn records: {what} is empty or has only blank lines "
        f"({todo}, or pass --allow-empty to accept an empty batch)"
    )


@pytest.mark.parametrize("content", ["", "\n", "\n   \n\t\r\n\n"], ids=["empty", "one-new-line", "blank-lines"])
@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "junit"])
def test_a_batch_file_with_no_turns_is_bad_input(run_cli: Run, tmp_path: Path, content: str, fmt: str) -> None:
    batch = tmp_path / "turns.jsonl"
    batch.write_text(content, encoding="utf-8")
    result = check(run_cli, "--batch", str(batch), "--engine", "local", "--format", fmt)
    assert result.code == 2
    assert result.out == ""
    assert result.err.splitlines() == [_no_turns(str(batch))]


def test_no_turns_on_stdin_is_bad_input() -> None:
    command = [sys.executable, "-m", "norma", "check", "--rules", BANKING, "--batch", "-", "--engine", "local"]
    proc = subprocess.run(command, cwd=REPO, input="\n\n", capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [_no_turns("<stdin>", stdin=True)]


def test_allow_empty_checks_nothing_and_exits_0(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "turns.jsonl"
    batch.write_text("\n  \n", encoding="utf-8")
    table = check(run_cli, "--batch", str(batch), "--engine", "local", "--allow-empty")
    assert table.code == 0, table.err
    assert table.out.splitlines() == ["0 records: 0 passed, 0 failed, 0 skipped, 0 bad"]
    assert table.err == ""
    result = check(run_cli, "--batch", str(batch), "--engine", "local", "--allow-empty", "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out) == {
        "rules": 28,
        "records": 0,
        "turns": 0,
        "passed": 0,
        "failed": 0,
        "skipped": 0,
        "bad": 0,
        "mean_reward": None,
        "results": [],
    }


def test_allow_empty_changes_nothing_when_there_are_turns(run_cli: Run, tmp_path: Path) -> None:
    batch = _with_bad_lines(tmp_path)
    given = ("--batch", str(batch), "--engine", "local", "--format", "json")
    plain, allowed = check(run_cli, *given), check(run_cli, *given, "--allow-empty")
    assert allowed.code == plain.code == 2
    assert json.loads(allowed.out) == json.loads(plain.out)


def test_allow_empty_goes_with_batch(run_cli: Run) -> None:
    result = check(run_cli, "-m", PIN_MESSAGE, "-o", GOOD, "--allow-empty")
    assert result.code == 2
    assert result.err.splitlines() == [
        "norma: error: --allow-empty goes with --batch (it lets a batch file with no turns exit 0)"
    ]


def test_batch_takes_no_single_turn_options(run_cli: Run) -> None:
    result = check(run_cli, "--batch", str(TURNS), "-m", "x")
    assert result.code == 2
    assert "--batch" in result.err


def _sharded(run_cli: Run, tmp_path: Path, fmt: str, ext: str) -> tuple[CliResult, CliResult, str]:
    whole = check(run_cli, "--batch", str(TURNS), "--format", fmt, "--engine", "local")
    parts = []
    for i in (1, 2):
        out = tmp_path / f"part{i}.{ext}"
        shard = check(run_cli, "--batch", str(TURNS), "--format", fmt, "--engine", "local", "--shard", f"{i}/2")
        assert shard.code in (0, 1), shard.err
        out.write_text(shard.out, encoding="utf-8")
        parts.append(str(out))
    merged = run_cli("merge", *parts)
    return whole, merged, parts[0]


def test_shards_merge_to_the_json_of_one_run(run_cli: Run, tmp_path: Path) -> None:
    whole, merged, _ = _sharded(run_cli, tmp_path, "json", "json")
    assert json.loads(merged.out) == json.loads(whole.out)
    assert merged.code == whole.code == 1


def test_shards_merge_to_the_sarif_of_one_run(run_cli: Run, tmp_path: Path) -> None:
    whole, merged, _ = _sharded(run_cli, tmp_path, "sarif", "sarif")
    assert json.loads(merged.out) == json.loads(whole.out)
    assert merged.code == whole.code == 1


def test_shards_merge_to_the_junit_of_one_run(run_cli: Run, tmp_path: Path) -> None:
    whole, merged, _ = _sharded(run_cli, tmp_path, "junit", "xml")
    assert merged.out == whole.out
    assert merged.code == whole.code == 1


def test_junit_has_a_suite_per_turn_naming_rule_check_severity_and_line(run_cli: Run) -> None:
    result = check(run_cli, "--batch", str(TURNS), "--format", "junit", "--engine", "local")
    root = ET.fromstring(result.out)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"{TURNS}:{n}" for n in range(1, 9)]
    card = suites[4]  # bad-prints-card: the card number is on line 1, column 43 of the output
    texts = [f.text or "" for f in card.iter("failure")]
    assert any("line 1, column 43: [error] never-ask-full-pin/no-card-number (no_pii)" in t for t in texts), texts
    assert card.get("failures") == str(len(texts))
    good = suites[7]
    assert good.get("failures") == "0"
    assert {p.get("name"): p.get("value") for p in good.iter("property")} == {"verdict": "pass", "reward": "1.000000"}


def test_markdown_lists_failures_only(run_cli: Run, single_verdicts: dict[str, Any]) -> None:
    result = check(run_cli, "--batch", str(TURNS), "--format", "markdown", "--engine", "local")
    rows = [line for line in result.out.splitlines() if line.startswith(f"| {TURNS} |")]
    failing_lines = {int(row.split(" | ")[1]) for row in rows}
    ids = [r["id"] for r in _records()]
    assert failing_lines == {ids.index(i) + 1 for i, (v, _) in single_verdicts.items() if v == "fail"}
    assert all(" | error | " in row for row in rows)
    fails = sum(v == "fail" for v, _ in single_verdicts.values())
    assert f"8 turns checked, {fails} failed." in result.out


# --- awkward outputs ----------------------------------------------------------------------------------------------


def test_unicode_output_and_columns(run_cli: Run, tmp_path: Path) -> None:
    answer = tmp_path / "réponse.txt"
    answer.write_text(f"Ça va ? 🙂 Numéro : {CARD}\n", encoding="utf-8")
    result = check(run_cli, "-m", "quel est mon solde", "--output-file", str(answer), "--format", "json")
    assert result.code == 1
    payload = json.loads(result.out)
    card = next(c for r in payload["rules"] for c in r["checks"] if c["check_id"] == "no-card-number")
    assert card["status"] == "fail"
    (evidence,) = card["evidence"][:1]
    assert evidence["line"] == 1
    assert evidence["column"] == len("Ça va ? 🙂 Numéro : ") + 1  # characters, not bytes
    assert payload["name"] == str(answer)


def test_an_empty_output(run_cli: Run) -> None:
    result = check(run_cli, "-m", PIN_MESSAGE, "--output", "", "--format", "json")
    payload = json.loads(result.out)
    # nothing warns never to share the PIN (warning), nothing asks for it, no card number: the verdict passes
    assert failed(payload) == {"never-ask-full-pin/warns-never-share"}
    assert payload["verdict"] == "pass"
    assert result.code == 0


def test_a_100000_character_output_file(run_cli: Run, tmp_path: Path) -> None:
    answer = tmp_path / "long.txt"
    line = "Never share your PIN with anyone, our fraud team will never ask for it.\n"
    text = (line * (100_000 // len(line) + 1))[: 100_000 - len(CARD) - 1] + "\n" + CARD
    assert len(text) == 100_000
    answer.write_text(text, encoding="utf-8")
    result = check(run_cli, "-m", PIN_MESSAGE, "--output-file", str(answer), "--format", "sarif")
    assert result.code == 1
    log = json.loads(result.out)
    card = next(r for r in log["runs"][0]["results"] if r["ruleId"].endswith("/no-card-number"))
    assert card["locations"][0]["physicalLocation"]["region"] == {"startLine": text.count("\n") + 1, "startColumn": 1}


def test_a_batch_record_with_an_empty_message_is_a_bad_record(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "turns.jsonl"
    records = [{"message": "   ", "output": "hello"}, {"message": "hi", "output": "hello"}]
    batch.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = check(run_cli, "--batch", str(batch), "--engine", "local")
    assert result.code == 2
    assert f"norma: error: {batch}:1: the message is empty (give the user's message)\n" in result.err
    assert result.out.splitlines()[-1].endswith("0 skipped, 1 bad")


def test_the_message_from_a_file_or_stdin_is_the_message_given(run_cli: Run, tmp_path: Path) -> None:
    import subprocess
    import sys

    message, answer = "my card was stolen yesterday", "I have blocked your card."
    given = json.loads(check(run_cli, "-m", message, "-o", answer, "--format", "json").out)
    file = tmp_path / "message.txt"
    file.write_text(message + "\n", encoding="utf-8")  # the line end an editor adds is not part of it
    from_file = check(run_cli, "--message-file", str(file), "-o", answer, "--format", "json")
    assert from_file.code == given_code(given)
    assert _same_turn(json.loads(from_file.out), given)
    piped = subprocess.run(
        [sys.executable, "-m", "norma", "check", "--rules", BANKING, "-m", "-", "-o", answer, "--format", "json"],
        input=message.encode() + b"\n", capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    assert _same_turn(json.loads(piped.stdout), given), piped.stderr
    both = check(run_cli, "-m", message, "--message-file", str(file), "-o", answer)
    assert both.code == 2
    assert "give the user's message once: --message TEXT or --message-file FILE" in both.err
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    bad = check(run_cli, "--message-file", str(binary), "-o", answer)
    assert (bad.code, bad.err) == (2, f"norma: error: {binary}: the message is not UTF-8 text\n")


def given_code(payload: dict[str, Any]) -> int:
    return 1 if payload["verdict"] == "fail" else 0


def _same_turn(one: dict[str, Any], other: dict[str, Any]) -> bool:
    keys = ("verdict", "reward", "counts")
    matched = [m["rule_id"] for m in one["matches"]] == [m["rule_id"] for m in other["matches"]]
    return matched and all(one[k] == other[k] for k in keys)


def test_a_batch_logs_its_progress_at_a_steady_pace_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    batch = tmp_path / "turns.jsonl"
    batch.write_text(
        "".join(json.dumps({"message": f"my card was stolen {i}", "output": "blocked"}) + "\n" for i in range(5)),
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "norma", "check", "--rules", BANKING, "--batch", str(batch), "--engine", "local"]

    def run(seconds: str) -> list[str]:
        env = {**os.environ, "NORMA_PROGRESS_SECONDS": seconds}
        proc = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        return [line for line in proc.stderr.splitlines() if line.startswith("norma: checking:")]

    every = run("0")  # a line a record, the last one left to the summary
    assert [re.sub(r" \(.*\)$", "", line) for line in every] == [
        f"norma: checking: {i} of 5 records" for i in range(1, 5)
    ]
    assert all(re.search(r" \(\d+\.\d/s(, \d+:\d\d left)?\)$", line) for line in every), every
    assert run("1e9") == []  # none within the pace
    bad = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300,
                         env={**os.environ, "NORMA_PROGRESS_SECONDS": "soon"})  # fmt: skip
    assert (bad.returncode, bad.stderr) == (
        2,
        "norma: error: $NORMA_PROGRESS_SECONDS must be a number of seconds, not 'soon' (unset it: 30)\n",
    )


def test_a_batch_in_a_pipe_shows_turn_ids_and_a_passing_turn_on_one_line(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "turns.jsonl"
    records = [
        {"id": "t-001", "message": PASSWORD, "output": PASSWORD_ANSWER},
        {"message": PASSWORD, "output": "Sure, tell me your full PIN and I will check it."},
    ]
    batch.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = check(run_cli, "--batch", str(batch), "--engine", "local", *NEIGHBOURS)
    lines = result.out.splitlines()
    assert lines[0] == (  # passing: one line, its id, its verdict and what it matched; no neighbour's skips
        f"{batch}:1 (t-001): PASS, reward 1.000 (3 passed, 0 failed, 2 skipped, 2 of them a neighbour's "
        "requirements); matched never-ask-full-pin (governs 1.00), fraud-suspected (neighbour 0.02), scam-warning "
        "(neighbour 0.00), lost-or-stolen-card (neighbour 0.00)"
    )
    assert lines[1].startswith(f"{batch}:2: matched never-ask-full-pin (governs ")  # failing: its checks follow
    assert "status: fail" in result.out
    assert "(neighbour)" not in result.out  # a neighbour's requirements are not this turn's: left out
    assert lines[-1] == "2 records: 1 passed, 1 failed, 0 skipped, 0 bad"
    verbose = check(run_cli, "--batch", str(batch), "--engine", "local", "--all", *NEIGHBOURS)
    assert "fraud-suspected (neighbour)" in verbose.out  # --all lists every check, as before


def test_a_batch_record_over_the_message_limit_is_a_bad_record_named_by_its_line(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "turns.jsonl"
    records = [{"message": "refund " * 20_000, "output": "x"}, {"message": "hi", "output": "hello"}]
    batch.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = check(run_cli, "--batch", str(batch), "--engine", "local")
    assert result.code == 2
    assert (
        f"norma: error: {batch}:1: the message is 140,000 characters, over the limit of 100,000 (shorten the "
        "message, or split it into several messages)\n"
    ) in result.err
    assert result.out.splitlines()[-1] == "2 records: 1 passed, 0 failed, 0 skipped, 1 bad"
