"""norma's pytest plugin and its assertion helpers (norma.testing), run by pytest itself through ``pytester``.

The inner sessions run in this process (``runpytest_inprocess``) with ``-p norma.pytest_plugin`` (and ``-p no:norma``,
so that an installed entry point does not register the module a second time). The capabilities and the embedding
model are loaded here first (:func:`_warm`): pytester puts ``sys.modules`` back after each inner session, and what
was there before stays, so the model loads once for the whole module. One test runs pytest in a subprocess to load
the plugin the way an installed norma does, through its ``pytest11`` entry point.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from norma.errors import InvalidInputError, RubricError
from norma.testing import (
    AuditAssertionError,
    MatchAssertionError,
    RubricAssertionError,
    TurnAssertionError,
    assert_audit_passes,
    assert_matches,
    assert_rubric_reward,
    assert_turn_passes,
)
from tests.conftest import EXAMPLES, REPO

pytest_plugins = ["pytester"]

PLUGIN = ("-p", "no:norma", "-p", "norma.pytest_plugin", "-p", "no:randomly", "-p", "no:cacheprovider")
DOCS = EXAMPLES / "audit" / "docs"
CASES = EXAMPLES / "audit" / "cases"
SUPPORT_RULES = EXAMPLES / "matching" / "support_rules.yaml"
CODE_REVIEW = EXAMPLES / "rubrics" / "code_review.json"
BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"
TURNS = {
    record["id"]: record
    for record in map(json.loads, (EXAMPLES / "turns" / "banking.jsonl").read_text(encoding="utf-8").splitlines())
}
PRINTS_CARD = TURNS["bad-prints-card"]  # a balance question answered with the full card number 4111 1111 1111 1111
COMPLAINT = TURNS["good-complaint"]  # the eight-week deadline and a reference number: every check passes


def _case(name: str) -> dict[str, str]:
    request: dict[str, str] = json.loads((CASES / f"{name}.json").read_text(encoding="utf-8"))["request"]
    return request


PASSING = _case("pass_english_reference")  # PASS with the example documents
SHOULD = _case("fail_english_should")  # FAIL: IR.7.01 and IR.8.01, both on output line 3 ("You should also ...")
ADORNED = _case("warn_english_adornments")  # PASS with one WARNING: IR.7.02 on output line 1 ("elegant")


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """Load the capabilities, the model and the example rulebook's matcher in this process, before any inner run."""
    assert_audit_passes(PASSING["output"], input=PASSING["input"], documents=DOCS)
    assert_matches("I lost my card", "lost-card", rules=SUPPORT_RULES)
    assert_turn_passes(COMPLAINT["message"], COMPLAINT["output"], rules=BANKING)


def _junit_failures(path: Path) -> dict[str, ET.Element]:
    """The ``<failure>`` element of each failed test case of a JUnit XML file, by test name."""
    failures = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is not None:
            failures[case.get("name", "")] = failure
    return failures


# -- packaging: the entry point and the cost of loading the plugin -----------------------------------------------


def test_the_pytest11_entry_point_is_declared() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["entry-points"]["pytest11"] == {"norma": "norma.pytest_plugin"}


def test_loading_the_plugin_imports_nothing_of_the_capabilities() -> None:
    """pytest loads the plugin in every session of every project where norma is installed."""
    code = (
        "import sys, pytest, norma\n"
        "before = set(sys.modules)\n"
        "import norma.pytest_plugin\n"
        "print(sorted(set(sys.modules) - before))\n"
        "import norma.testing\n"
        "print(sorted(m for m in set(sys.modules) - before if not m.startswith('norma.testing')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["['norma.pytest_plugin']", "['norma.pytest_plugin']"]


def test_an_installed_norma_registers_the_plugin_through_its_entry_point(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A distribution declaring the same ``pytest11`` entry point as pyproject.toml: pytest finds the plugin alone."""
    site = pytester.mkdir("site")
    dist = site / "norma_plugin_probe-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: norma-plugin-probe\nVersion: 1.0\n", encoding="utf-8")
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    declared = pyproject["project"]["entry-points"]["pytest11"]
    lines = "".join(f"{name} = {target}\n" for name, target in declared.items())
    (dist / "entry_points.txt").write_text(f"[pytest11]\n{lines}", encoding="utf-8")
    paths = [str(site), str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    pytester.makepyfile(
        f"""
        def test_the_fixture_is_there(norma_audit):
            norma_audit.assert_passes({PASSING["output"]!r}, input={PASSING["input"]!r})
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", "--norma-audit-docs", DOCS)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"norma: norma_audit_docs={DOCS}"])


# -- assert_audit_passes ---------------------------------------------------------------------------------------------


def test_audit_failures_list_rule_ids_severities_and_lines(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        from norma.testing import assert_audit_passes

        DOCS = {str(DOCS)!r}

        def test_referenced_answer_passes():
            report = assert_audit_passes({PASSING["output"]!r}, input={PASSING["input"]!r}, documents=DOCS)
            assert report.model_dump(mode="json")["result"] == "PASS"

        def test_unrequested_modal_fails():
            assert_audit_passes({SHOULD["output"]!r}, input={SHOULD["input"]!r}, documents=DOCS)

        def test_a_warning_fails_with_fail_on_warning():
            assert_audit_passes({ADORNED["output"]!r}, input={ADORNED["input"]!r}, documents=DOCS, fail_on="warning")

        def test_a_warning_passes_by_default():
            assert_audit_passes({ADORNED["output"]!r}, input={ADORNED["input"]!r}, documents=DOCS)

        def test_only_the_given_rules_count():
            assert_audit_passes({SHOULD["output"]!r}, input={SHOULD["input"]!r}, documents=DOCS, rules=["IR.7.02"])
        """
    )
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess(*PLUGIN, f"--junitxml={junit}")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*def test_unrequested_modal_fails():",
            ">*assert_audit_passes(*",
            "E*norma.testing.AuditAssertionError: audit FAIL: 2 violation(s) (2 ERROR): IR.7.01, IR.8.01",
            "E*  IR.7.01 ERROR output line 3: unrequested inference ('you should also') *(evidence: 'you should also')",
            "E*  IR.8.01 ERROR output line 3: the output delivers code or technical decisions that break the norms*",
            "E*  IR.6.02 not evaluated: no re-runs*",
            "*def test_a_warning_fails_with_fail_on_warning():",
            "E*norma.testing.AuditAssertionError: audit PASS: 1 violation(s) (1 WARNING): IR.7.02",
            "E*  IR.7.02 WARNING output line 1: evaluative adornment 'elegant' in a technical context*",
        ]
    )
    text = result.stdout.str()
    assert "_audit.py" not in text  # the helper's frames are hidden: the traceback ends at the test's own line
    failures = _junit_failures(junit)
    assert set(failures) == {"test_unrequested_modal_fails", "test_a_warning_fails_with_fail_on_warning"}
    failure = failures["test_unrequested_modal_fails"]
    ir701 = (
        "  IR.7.01 ERROR output line 3: unrequested inference ('you should also') without the mark 'Non-normative "
        "suggestion:' (evidence: 'you should also')"
    )
    ir801 = (
        "  IR.8.01 ERROR output line 3: the output delivers code or technical decisions that break the norms "
        "(IR.7.01): an answer that cannot follow them should say which norm stops it instead of delivering a "
        "non-compliant solution (fixing IR.7.01 clears this too) (evidence: 'IR.7.01')"
    )
    # the message attribute keeps whole lines up to pytest's budget (the summary first); the element has them all
    summary = "norma.testing.AuditAssertionError: audit FAIL: 2 violation(s) (2 ERROR): IR.7.01, IR.8.01"
    assert failure.get("message", "").splitlines()[:2] == [summary, ir701]
    assert f"E       {summary}\nE       {ir701}\nE       {ir801}\n" in (failure.text or "")
    warning = failures["test_a_warning_fails_with_fail_on_warning"].get("message", "")
    assert warning.startswith("norma.testing.AuditAssertionError: audit PASS: 1 violation(s) (1 WARNING): IR.7.02\n")


def test_audit_helper_raises_an_assertion_error_with_the_report() -> None:
    with pytest.raises(AuditAssertionError) as caught:
        assert_audit_passes(SHOULD["output"], request={"input": SHOULD["input"]}, documents=DOCS)
    assert isinstance(caught.value, AssertionError)
    assert [v.rule for v in caught.value.report.errors()] == ["IR.7.01", "IR.8.01"]
    assert caught.value.summary == "audit FAIL: 2 violation(s) (2 ERROR): IR.7.01, IR.8.01"


def test_audit_helper_wants_the_prompt() -> None:
    with pytest.raises(InvalidInputError, match=r"no input to audit the output against") as caught:
        assert_audit_passes(SHOULD["output"], documents=DOCS)
    assert caught.value.hint == "give the user's prompt: input='...' (or request={'input': '...'})"


# -- assert_rubric_reward --------------------------------------------------------------------------------------------


def test_rubric_failures_list_each_criterion(pytester: pytest.Pytester) -> None:
    events = json.loads((EXAMPLES / "rubrics" / "inputs" / "code_review_events.json").read_text(encoding="utf-8"))
    outcome = json.loads((EXAMPLES / "rubrics" / "inputs" / "code_review_outcome.json").read_text(encoding="utf-8"))
    pytester.makepyfile(
        f"""
        from norma.testing import assert_rubric_reward

        RUBRIC = {str(CODE_REVIEW)!r}

        def test_events_reach_the_bar():
            result = assert_rubric_reward(RUBRIC, events={events!r}, at_least=0.78)
            assert result["reward"] == 0.78

        def test_events_below_the_bar():
            assert_rubric_reward(RUBRIC, events={events!r}, at_least=0.9)

        def test_a_required_criterion_below_the_bar():
            assert_rubric_reward(RUBRIC, outcome={outcome!r}, at_least=0.7, enforce_required=True)
        """
    )
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess(*PLUGIN, f"--junitxml={junit}")
    result.assert_outcomes(passed=1, failed=2)
    # weighted_sum: (0.9*2 + 0.6*1.5 + 1.0*1 + 0.4*0.5) / 5 = 0.78; the outcome: (0.55*2 + 0.9*1.5 + 0.8 + 1.0*0.5) / 5
    result.stdout.fnmatch_lines(
        [
            "E*norma.testing.RubricAssertionError: rubric reward 0.78 < 0.9 (weighted_sum of 4 criteria)",
            "E*  correctness 0.9 weight 2, required",
            "E*  tests 0.6 weight 1.5, below 0.9",
            "E*  style 1 weight 1",
            "E*  docs 0.4 weight 0.5, below 0.9",
            "E*  input [[]4]: criterion id 'unrelated' matches no criterion",
            "E*  input [[]5]: not an object, so it matches no criterion",
            "E*norma.testing.RubricAssertionError: rubric reward 0.75 >= 0.7, but required criteria are below it: "
            "correctness",
            "E*  correctness 0.55 weight 2, required, below 0.7",
        ]
    )
    failures = _junit_failures(junit)
    assert (
        failures["test_events_below_the_bar"]
        .get("message", "")
        .startswith(
            "norma.testing.RubricAssertionError: rubric reward 0.78 < 0.9 (weighted_sum of 4 criteria)\n"
            "  correctness 0.9 weight 2, required\n"
        )
    )


def test_rubric_helper_reads_a_mapping_and_refuses_a_custom_rubric_without_aggregator() -> None:
    rubric = {"version": "1", "aggregation": "custom", "criteria": [{"id": "a", "description": "a", "weight": 1}]}
    with pytest.raises(RubricError, match="a custom rubric gives no reward without an aggregator"):
        assert_rubric_reward(rubric, outcome={"a": 1.0}, at_least=0.5)
    assert assert_rubric_reward(rubric, outcome={"a": 0.5}, at_least=0.5, aggregator="min")["reward"] == 0.5
    with pytest.raises(RubricAssertionError) as caught:
        assert_rubric_reward(rubric, outcome={"a": 0.25}, at_least=0.5, aggregator="min")
    assert caught.value.result["reward"] == 0.25
    negative = {"version": "1", "criteria": [{"id": "a", "description": "a", "weight": -1}]}
    with pytest.raises(RubricError) as bad:
        assert_rubric_reward(negative, outcome={"a": 1.0}, at_least=0.5)
    assert (bad.value.source, bad.value.location) == ("<dict>", "criteria[0].weight")


# -- assert_matches and the fixtures ---------------------------------------------------------------------------------


def test_fixtures_read_the_ini_file_and_match_failures_say_why(pytester: pytest.Pytester) -> None:
    shutil.copy(SUPPORT_RULES, pytester.path / "rules.yaml")
    shutil.copytree(DOCS, pytester.path / "norms")
    pytester.makeini("[pytest]\nnorma_rules = rules.yaml\nnorma_audit_docs = norms\n")
    pytester.makepyfile(
        f"""
        from norma.testing import assert_matches

        def test_two_rules(norma_rules):
            assert_matches("I lost my card and I want my money back", ["lost-card", "refund-request"],
                           rules=norma_rules, exactly=True)

        def test_one_too_many(norma_rules):
            assert_matches("I lost my card and I want my money back", "lost-card", rules=norma_rules, exactly=True)

        def test_out_of_scope(norma_rules):
            assert_matches("where is my parcel", "delivery-missing", rules=norma_rules)

        def test_in_its_scenario(norma_rules):
            assert_matches("where is my parcel", "delivery-missing", rules=norma_rules,
                           session={{"active_scenario_id": "delivery"}})

        def test_nothing(norma_rules):
            assert_matches("where is my parcel", [], rules=norma_rules, exactly=True)

        def test_the_audit_fixture_has_the_documents(norma_audit):
            report = norma_audit.assert_passes({PASSING["output"]!r}, input={PASSING["input"]!r})
            assert report.model_dump(mode="json")["result"] == "PASS"
        """
    )
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess(*PLUGIN, f"--junitxml={junit}")
    result.assert_outcomes(passed=4, failed=2)
    result.stdout.fnmatch_lines(
        [
            f"norma: norma_rules={pytester.path / 'rules.yaml'}, norma_audit_docs={pytester.path / 'norms'}",
            # the refund is a second intent the default gate does not return (multi-label: docs/check.md)
            "E*norma.testing.MatchAssertionError: 'I lost my card and I want my money back' matched lost-card; "
            "expected exactly lost-card, refund-request",
            "E*  missing refund-request (priority 10): threshold: confidence 0.* < 0.7 that it governs the message "
            "(similarity 0.*)",
            "E*  matched lost-card (priority 20): final *",
            "E*  gate: confidence >= 0.7: the rules that govern the message (the default gate)",
            "E*norma.testing.MatchAssertionError: 'where is my parcel' matched no rule; expected delivery-missing",
            "E*  missing delivery-missing (priority 0): scope: scenario 'delivery' is not active (no scenario is "
            "active)",
        ]
    )
    failures = _junit_failures(junit)
    assert set(failures) == {"test_two_rules", "test_out_of_scope"}
    assert failures["test_out_of_scope"].get("message", "").splitlines()[:2] == [
        "norma.testing.MatchAssertionError: 'where is my parcel' matched no rule; expected delivery-missing",
        "  missing delivery-missing (priority 0): scope: scenario 'delivery' is not active (no scenario is active)",
    ]


def test_the_command_line_option_wins_over_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nnorma_rules = missing.yaml\n")
    pytester.makepyfile(
        """
        def test_banking_rules(norma_rules):
            assert "fraud-suspected" in norma_rules
        """
    )
    banking = EXAMPLES / "rulebooks" / "banking-support.yaml"
    assert pytester.runpytest_inprocess(*PLUGIN, "--norma-rules", str(banking)).ret == 0
    broken = pytester.runpytest_inprocess(*PLUGIN)  # the ini file's, which does not exist
    broken.assert_outcomes(errors=1)
    broken.stdout.fnmatch_lines([f"*norma_rules: *{pytester.path / 'missing.yaml'}*"])


def test_a_fixture_without_its_setting_says_what_to_set(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_needs_rules(norma_rules):
            pass
        """
    )
    result = pytester.runpytest_inprocess(*PLUGIN)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*the norma_rules fixture needs a rulebook: set norma_rules in the ini file or pass --norma-rules FILE*"]
    )
    assert "norma:" not in result.stdout.str().split("collected")[0]  # no header line when nothing is set


def test_match_helper_refuses_an_unknown_rule_id() -> None:
    with pytest.raises(InvalidInputError, match=r"no rule 'lost-crad' in the rulebook") as caught:
        assert_matches("I lost my card", ["lost-crad"], rules=SUPPORT_RULES)
    assert caught.value.hint is not None
    assert "lost-card" in caught.value.hint
    with pytest.raises(MatchAssertionError) as failed:
        assert_matches("hello there", "lost-card", rules=SUPPORT_RULES)
    assert [m.rule.id for m in failed.value.result] == ["greeting"]


# -- assert_turn_passes and the norma_check fixture ------------------------------------------------------------------


def test_turn_failures_list_rule_and_check_ids_severities_and_line_columns(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        from norma.testing import assert_turn_passes

        RULES = {str(BANKING)!r}

        def test_a_complaint_answered_well():
            report = assert_turn_passes({COMPLAINT["message"]!r}, {COMPLAINT["output"]!r}, rules=RULES)
            assert (report.verdict.value, report.reward) == ("pass", 1.0)

        def test_the_card_number_printed():
            assert_turn_passes({PRINTS_CARD["message"]!r}, {PRINTS_CARD["output"]!r}, rules=RULES)

        def test_no_reference_passes_by_default():
            assert_turn_passes("I want to make a complaint", "Logged. We answer within eight weeks.", rules=RULES)

        def test_no_reference_fails_on_warning():
            assert_turn_passes("I want to make a complaint", "Logged. We answer within eight weeks.", rules=RULES,
                               fail_on="warning")
        """
    )
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_inprocess(*PLUGIN, f"--junitxml={junit}")
    result.assert_outcomes(passed=2, failed=2)
    # "The balance of the account linked to card " is 42 characters: the number starts at line 1, column 43
    card = (
        "never-ask-full-pin/no-card-number error output 1:43: personal data found: card number (once) "
        "(evidence: '**** **** **** 1111')"
    )
    result.stdout.fnmatch_lines(
        [
            "*def test_the_card_number_printed():",
            ">*assert_turn_passes(*",
            "E*norma.testing.TurnAssertionError: turn FAIL, reward 0: 1 failed check(s) (1 error): "
            "never-ask-full-pin/no-card-number",
            f"E*  {glob.escape(card)}",
            "*def test_no_reference_fails_on_warning():",
            # (1 of 2 complaint checks passed: 0.5 at weight 2, the card check 1 at weight 3) / 5 = 0.8
            "E*norma.testing.TurnAssertionError: turn PASS, reward 0.8: 1 failed check(s) (1 warning): "
            "complaint/gives-reference",
            "E*  complaint/gives-reference warning output: nothing matches *",
        ]
    )
    assert "_turn.py" not in result.stdout.str()  # the helper's frames are hidden
    page = (REPO / "docs" / "pytest.md").read_text(encoding="utf-8")
    (shown,) = [block for block in _blocks(page, "text") if "TurnAssertionError" in block]
    result.stdout.fnmatch_lines([glob.escape(line) for line in shown.splitlines()])  # docs/pytest.md shows these
    failures = _junit_failures(junit)
    assert set(failures) == {"test_the_card_number_printed", "test_no_reference_fails_on_warning"}
    summary = (
        "norma.testing.TurnAssertionError: turn FAIL, reward 0: 1 failed check(s) (1 error): "
        "never-ask-full-pin/no-card-number"
    )
    # the failures that count come first, so the message attribute (cut at 500 characters) keeps them; a
    # neighbour's requirements (fraud-suspected matched the balance question as a neighbour) are not listed
    message = failures["test_the_card_number_printed"].get("message", "").splitlines()
    assert message == [summary, f"  {card}"]
    assert f"E       {summary}\n" in (failures["test_the_card_number_printed"].text or "")


def test_the_norma_check_fixture_checks_on_the_norma_rules_rulebook(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        from norma.testing import assert_turn_passes
        from norma import Norma

        def test_a_good_turn(norma_check):
            assert isinstance(norma_check, Norma)
            assert norma_check.check({COMPLAINT["message"]!r}, {COMPLAINT["output"]!r}).verdict.value == "pass"

        def test_a_bad_turn(norma_check):
            assert_turn_passes("my pin is 1234 can you check it", "Sure, please confirm your PIN.", rules=norma_check)
        """
    )
    result = pytester.runpytest_inprocess(*PLUGIN, "--norma-rules", str(BANKING))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*norma.testing.TurnAssertionError: turn FAIL, reward *: * failed check(s) (1 error): "
            "never-ask-full-pin/does-not-ask-for-secrets",
            "E*  never-ask-full-pin/does-not-ask-for-secrets error output 1:*: * (evidence: 'confirm your PIN')",
        ]
    )


def test_turn_helper_raises_an_assertion_error_with_the_report_and_refuses_bad_input() -> None:
    with pytest.raises(TurnAssertionError) as caught:
        assert_turn_passes(PRINTS_CARD["message"], PRINTS_CARD["output"], rules=BANKING)
    assert isinstance(caught.value, AssertionError)
    assert caught.value.report.verdict.value == "fail"
    assert [(r.rule_id, r.check_id) for r in caught.value.report.failures if r.severity.value == "error"] == [
        ("never-ask-full-pin", "no-card-number"),
    ]
    assert "fraud-suspected" not in str(caught.value)  # a neighbour: its skipped requirements are not listed
    with pytest.raises(InvalidInputError, match="invalid session"):
        assert_turn_passes("hello", "hi", rules=BANKING, session={"turn": "third"})
    with pytest.raises(ValueError, match="fail_on must be 'error' or 'warning'"):
        assert_turn_passes("hello", "hi", rules=BANKING, fail_on="info")  # type: ignore[arg-type]


# -- docs/pytest.md ----------------------------------------------------------------------------------------------


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def test_the_documented_example_fails_as_the_page_shows(pytester: pytest.Pytester) -> None:
    page = (REPO / "docs" / "pytest.md").read_text(encoding="utf-8")
    (ini,) = _blocks(page, "ini")
    (example,) = _blocks(page, "python")
    shown = _blocks(page, "text")[0].splitlines()
    (pytester.path / "examples").symlink_to(EXAMPLES)
    pytester.makeini(ini)
    pytester.makepyfile(test_agent=example)
    result = pytester.runpytest_inprocess(*PLUGIN)
    result.assert_outcomes(passed=3, failed=2)
    assert "$ pytest test_agent.py\n...\n...2 failed, 3 passed in ...\n" in page  # as the wheel's test runs it
    checked = [line for line in shown if line.startswith(("E ", ">", "test_agent.py:"))]
    assert len(checked) == 13  # 2 failing lines, 9 error lines, 2 locations
    result.stdout.fnmatch_lines([glob.escape(line) for line in checked])
