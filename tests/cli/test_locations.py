"""Issue #59 item 4: every error in a file says where as editors and CI problem matchers read it, ``FILE:LINE:COL:``;
the same bad rulebook exits 2 whatever the command; inside GitHub Actions every error is also an annotation; and
item 6: a message over the size limit gets a hint a CLI user can follow.

Each test runs the real CLI (``norma.cli.main``, in-process) on real bad files written to ``tmp_path``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from norma.cli._errors import ErrorLine, annotation
from norma.rules import RulebookError, load_rulebook
from tests.conftest import EXAMPLES, CliResult
from tests.test_action import _run_action

Run = Callable[..., CliResult]
BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
HINT = "(fix every rule listed; `norma docs store` shows the format)"

# a content error deep in a rule (line 10, column 15: the value `contain`), a required field left out (rule b, whose
# mapping starts at line 12, column 5) and a value of the wrong type (line 13, column 15)
DEEP = """\
format: norma.rulebook/v1
rules:
  - id: refund
    condition_text: customer asks for a refund
    checks:
      - id: says-refund
        kind: contains
        terms: [refund]
      - id: typo
        kind: contain
        terms: [x]
  - id: b
    priority: high
"""


def _problems(path: Path) -> list[str]:
    """The library's words for each problem of ``path`` (the CLI prints them after ``FILE:LINE:COL:``)."""
    with pytest.raises(RulebookError) as caught:
        load_rulebook(path)
    return [str(problem) for problem in caught.value.problems]


def _commands(path: Path) -> list[tuple[str, ...]]:
    """Every way a rulebook reaches the CLI, stopping before anything else is read."""
    return [
        ("rules", "validate", str(path)),
        ("check", "--rules", str(path), "-m", "hi", "-o", "hello"),
        ("match", "--rules", str(path), "hi"),
    ]


def test_a_content_error_deep_in_a_rule_names_the_line_and_column_of_its_node(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(DEEP, encoding="utf-8")
    words = _problems(path)
    assert words[0].startswith("rules[0] (refund).checks[1].kind: unknown kind 'contain'")
    assert words[1:] == [
        "rules[1] (b).condition_text: Field required",
        "rules[1] (b).priority: Input should be a valid integer, unable to parse string as an integer",
    ]
    located = [f"{path}:10:15: {words[0]}", f"{path}:12:5: {words[1]}", f"{path}:13:15: {words[2]}"]
    for args in _commands(path)[1:]:
        result = run_cli(*args)
        assert (result.code, result.out) == (2, ""), args
        assert result.err.splitlines() == [f"norma: error: {path}: 3 problems in the rulebook {HINT}:", *located]
    validated = run_cli("rules", "validate", str(path))
    assert (validated.code, validated.err) == (2, "")
    assert validated.out.splitlines() == [f"INVALID  {path}: 3 problem(s)", *located]
    payload = json.loads(run_cli("rules", "validate", str(path), "--format", "json").out)
    places = [(p["field"], p["line"], p["column"]) for p in payload["files"][0]["problems"]]
    assert places == [("checks[1].kind", 10, 15), ("condition_text", 12, 5), ("priority", 13, 15)]
    imported = run_cli("rules", "import", str(path), "--tenant", "acme", "--db", f"sqlite:///{tmp_path}/s.db")
    assert (imported.code, imported.out) == (2, "")
    assert imported.err.splitlines() == [f"norma: error: {path}: 3 problem(s), nothing imported:", *located]


def _placed(source: Path | dict[str, Any]) -> list[tuple[str, int | None, int | None]]:
    """Each problem of ``source`` as ``field: message`` and where it is (line, column)."""
    with pytest.raises(RulebookError) as caught:
        load_rulebook(source)
    return [(f"{p.field}: {p.message}", p.line, p.column) for p in caught.value.problems]


def test_an_empty_value_is_placed_at_its_key_and_a_missing_rules_list_at_the_mapping(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - id: a\n    condition_text:\n", encoding="utf-8")
    assert _placed(path) == [("condition_text: Input should be a valid string", 3, 5)]
    path.write_text("format: norma.rulebook/v1\ntenant: acme\nrulez: []\n", encoding="utf-8")
    assert _placed(path) == [("rulez: unknown key", 3, 8), ("rules: must be a list of rules", 1, 1)]
    assert _placed({"rules": [{"id": "a"}]}) == [("condition_text: Field required", None, None)]  # data: no lines


def test_a_json_rulebook_content_error_names_its_line_and_column(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    rules = {"rules": [{"id": "a", "condition_text": "x", "checks": [{"id": "c", "kind": "contain", "terms": ["y"]}]}]}
    path.write_text(json.dumps(rules, indent="\t") + "\n", encoding="utf-8")  # tabs: valid JSON, not valid YAML
    (words,) = _problems(path)
    for args in _commands(path)[1:]:
        result = run_cli(*args)
        assert result.code == 2, args
        assert result.err.splitlines()[1:] == [f"{path}:9:14: {words}"], args
    assert run_cli(*_commands(path)[0]).out.splitlines()[1:] == [f"{path}:9:14: {words}"]


def test_a_yaml_syntax_error_reads_the_same_and_exits_2_from_every_command(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "syntax.yaml"
    path.write_text("rules:\n  - id: a\n    condition_text: a: b\n", encoding="utf-8")
    for args in _commands(path):
        result = run_cli(*args)
        assert (result.code, result.out) == (2, ""), args
        assert result.err == f"norma: error: {path}:3:22: not valid YAML: mapping values are not allowed here\n", args


def test_rules_validate_checks_every_file_when_one_cannot_be_parsed(run_cli: Run, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text('rules:\n  - id: a\n    condition_text: "never closed\n', encoding="utf-8")
    result = run_cli("rules", "validate", str(broken), BANKING)
    assert result.code == 2
    assert result.err == (
        f"norma: error: {broken}:3:21: not valid YAML: found unexpected end of stream while scanning a quoted scalar "
        "that starts here\n"
    )
    assert result.out.startswith(f"valid    {BANKING} (28 rules")
    assert run_cli("rules", "validate", BANKING).code == 0


def test_a_binary_file_names_the_line_of_the_first_bad_byte(run_cli: Run, tmp_path: Path) -> None:
    rulebook = tmp_path / "rules.yaml"
    rulebook.write_bytes(b"rules:\n  - id: a\n    condition_text: \xff\xfe\n")
    for args in _commands(rulebook):
        result = run_cli(*args)
        assert (result.code, result.err) == (
            2,
            f"norma: error: {rulebook}:3:21: not valid YAML: unacceptable character #x00ff: invalid start byte\n",
        ), args
    turns = tmp_path / "turns.jsonl"
    turns.write_bytes(b'{"message": "hi", "output": "hello"}\n\xff\xfe\x00\x01\n')
    result = run_cli("check", "--rules", BANKING, "--batch", str(turns))
    assert (result.code, result.out, result.err) == (2, "", f"norma: error: {turns}:2: not valid UTF-8 at byte 0\n")


@pytest.mark.model
def test_a_bad_batch_record_is_file_line_column_in_every_batch(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "broken.jsonl"
    batch.write_text('\n{"message": "hi", "output": "hello"\n', encoding="utf-8")
    error = f"norma: error: {batch}:2:36: not valid JSON: Expecting ',' delimiter\n"
    for args in (
        ("check", "--rules", BANKING, "--batch", str(batch)),
        ("match", "--rules", BANKING, "--batch", str(batch)),
        ("audit", "run", "--no-embeddings", "--batch", str(batch)),
    ):
        result = run_cli(*args)
        assert (result.code, result.err) == (2, error), args
    batch.write_text('{"message": "hi", "output": "hello", "session": 3}\n', encoding="utf-8")
    result = run_cli("check", "--rules", BANKING, "--batch", str(batch))  # FILE:LINE: field: message
    assert result.err == f"norma: error: {batch}:1: session: a session must be a mapping of fields, got int\n"


def test_every_error_is_an_annotation_inside_github_actions_and_only_there(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a,b:c%.yaml"  # a name with what a property escapes
    path.write_text(DEEP.replace("kind: contain\n", "kind: '50%'\n"), encoding="utf-8")
    words = _problems(path)
    escaped = str(path).replace("%", "%25").replace(":", "%3A").replace(",", "%2C")
    annotations = [
        f"::error file={escaped},line=10,col=15,title=norma::{words[0].replace('%', '%25')}",
        f"::error file={escaped},line=12,col=5,title=norma::{words[1]}",
        f"::error file={escaped},line=13,col=15,title=norma::{words[2]}",
    ]
    assert "unknown kind '50%25'" in annotations[0]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    checked = run_cli("check", "--rules", str(path), "-m", "hi", "-o", "hello")
    assert checked.code == 2
    assert checked.err.splitlines()[4:] == annotations  # after the error line and the three problem lines
    validated = run_cli("rules", "validate", str(path))
    assert (validated.code, validated.err.splitlines()) == (2, annotations)
    syntax = tmp_path / "syntax.yaml"
    syntax.write_text("rules:\n  - id: a\n    condition_text: a: b\n", encoding="utf-8")
    result = run_cli("match", "--rules", str(syntax), "hi")
    assert result.err.splitlines() == [
        f"norma: error: {syntax}:3:22: not valid YAML: mapping values are not allowed here",
        f"::error file={syntax},line=3,col=22,title=norma::not valid YAML: mapping values are not allowed here",
    ]
    usage = run_cli("check", "-m", "hi", "-o", "hello")  # no file: an annotation all the same, without a place
    assert usage.err == (
        "norma: error: give the rules: --rules FILE or --tenant TENANT (one of them)\n"
        "::error title=norma::give the rules: --rules FILE or --tenant TENANT (one of them)\n"
    )
    for value in ("false", None):
        if value is None:
            monkeypatch.delenv("GITHUB_ACTIONS")
        else:
            monkeypatch.setenv("GITHUB_ACTIONS", value)
        quiet = run_cli("check", "--rules", str(path), "-m", "hi", "-o", "hello")
        assert quiet.code == 2
        assert not [line for line in quiet.err.splitlines() if line.startswith("::")], value


def test_an_annotation_escapes_what_github_documents() -> None:
    line = ErrorLine("50% done\r\nnext", file="dir/a,b:c.yaml", line=3, column=7)
    assert annotation(line) == "::error file=dir/a%2Cb%3Ac.yaml,line=3,col=7,title=norma::50%25 done next"
    assert annotation(ErrorLine("no place: 100%")) == "::error title=norma::no place: 100%25"
    stdin = ErrorLine("not valid JSON: x", file="<stdin>", line=2, column=1)  # not a file of the repository
    assert annotation(stdin) == "::error title=norma::<stdin>:2:1: not valid JSON: x"


@pytest.mark.parametrize(
    ("where", "error", "expected"),
    [
        ("t.jsonl:2", "t.jsonl:2:5: not valid JSON: x", ErrorLine("not valid JSON: x", "t.jsonl", 2, 5)),
        ("t.jsonl:2", "t.jsonl:2: session: not a mapping", ErrorLine("session: not a mapping", "t.jsonl", 2)),
        ("t.jsonl:2", "the message is empty", ErrorLine("the message is empty", "t.jsonl", 2)),
        ("t.jsonl:2", "t.jsonl:23: x", ErrorLine("t.jsonl:23: x", "t.jsonl", 2)),
        ("t.parquet:row 4", "bad", ErrorLine("t.parquet:row 4: bad")),
    ],
)
def test_a_batch_record_error_is_placed_on_its_line(where: str, error: str, expected: ErrorLine) -> None:
    assert ErrorLine.of_record(where, error) == expected


@pytest.mark.model
def test_a_message_over_the_limit_gets_a_hint_a_cli_user_can_follow(run_cli: Run, tmp_path: Path) -> None:
    message = "x" * 100_001
    cli_hint = "(shorten the message, or split it into several messages)"
    result = run_cli("match", "--rules", BANKING, message)
    assert (result.code, result.err) == (
        2,
        f"norma: error: the message is 100,001 characters, over the limit of 100,000 {cli_hint}\n",
    )
    batch = tmp_path / "turns.jsonl"
    batch.write_text(json.dumps({"message": message, "output": "x"}) + "\n", encoding="utf-8")
    result = run_cli("check", "--rules", BANKING, "--batch", str(batch))
    assert result.err == (
        f"norma: error: {batch}:1: the message is 100,001 characters, over the limit of 100,000 {cli_hint}\n"
    )
    assert "MatchConfig" not in result.err
    import norma
    from norma.errors import LimitExceededError

    with pytest.raises(LimitExceededError) as caught:  # the Python API names the Python setting
        norma.open(BANKING, judge=None).match(message)
    assert caught.value.hint == "shorten the message, or raise MatchConfig.max_message_chars"


@pytest.mark.model
def test_the_action_annotates_a_bad_rulebook_on_its_line(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "rules").mkdir(parents=True)
    (workspace / "rules" / "bad.yaml").write_text(DEEP, encoding="utf-8")
    (workspace / "turns.jsonl").write_text('{"message": "hi", "output": "hello"}\n', encoding="utf-8")
    run = _run_action(
        workspace,
        tmp_path,
        env={"GITHUB_ACTIONS": "true"},
        command="check",
        files="turns.jsonl",
        rules="rules/bad.yaml",
        install="false",
    )
    assert (run.code, run.outputs["exit-code"]) == (2, "2")
    found = re.findall(r"^::error file=rules/bad\.yaml,line=(\d+),col=(\d+),title=norma::", run.stdout, re.M)
    assert found == [("10", "15"), ("12", "5"), ("13", "15")]


def test_norma_docs_cli_says_the_location_format_and_the_exit_codes(run_cli: Run) -> None:
    page = run_cli("docs", "cli").out
    assert "## Errors and exit codes" in page
    assert "`FILE:LINE:COL:`" in page
    assert "| 2 | usage or input error: unknown option, missing file, unreadable or malformed input; a rulebook" in page
    assert "`::error file=rules.yaml,line=6,col=15,title=norma::" in page
