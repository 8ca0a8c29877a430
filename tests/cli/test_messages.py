"""The exact words of the CLI's errors for the "bad input" and "error polish" items of issue 24."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO, CliResult

Run = Callable[..., CliResult]


def test_bad_json_reads_the_same_in_rubric_and_match(run_cli: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": ', encoding="utf-8")
    expected = f"norma: error: {bad}:1:13: not valid JSON: Expecting value\n"
    for args in (("rubric", "validate", str(bad)), ("match", "--rules", str(bad), "hi")):
        result = run_cli(*args)
        assert (result.code, result.err) == (2, expected), args


# case -> (file name, its content, the command after ``norma`` with FILE standing for the file, the error after
# "norma: error: ", FILE standing for the file)
_FILE_ERROR_CASES: dict[str, tuple[str, bytes, str, str]] = {
    "a size error gives a hint the CLI user can follow": (
        "big.json", b" " * 2_000_000, "rubric validate FILE",
        "FILE: rubric file is 2000000 bytes, over the limit of 1048576 bytes (trim the rubric or split its criteria "
        "(from Python, max_bytes= raises the limit))",
    ),
    "a rule problem names its rule once": (
        "r.json", b'[{"id": "a", "condition_text": "x", "scope": "step"}]', "match --rules FILE hi",
        "FILE: 1 problem in the rulebook (fix every rule listed; `norma docs store` shows the format):\n"
        "FILE:1:2: rules[0] (a).rule: a STEP rule needs step_id",
    ),
    "an empty rules file says so": (
        "empty.yaml", b"", "match --rules FILE hello",
        "FILE: 1 problem in the rulebook (fix every rule listed; `norma docs store` shows the format):\n"
        "FILE: rulebook.rules: the file is empty: write a list of rules, or a mapping with a 'rules' list",
    ),
    "names score prints its error without a blank line": (
        "r.jsonl", b'{"name": "John", "variations": ["Jon"], "labels": "x"}\n', "names score FILE",
        'FILE:1: bad record: labels: labels must be an object, not str (pass {"variation_count": 10, '
        '"phonetic_similarity": {...}, ...}, as build_query returns)',
    ),
}  # fmt: skip
FILE_ERRORS = [
    pytest.param(name, content, tuple(command.split()), message, id=case)
    for case, (name, content, command, message) in _FILE_ERROR_CASES.items()
]


@pytest.mark.parametrize(("name", "content", "args", "message"), FILE_ERRORS)
def test_a_bad_file_gives_one_exact_line(
    run_cli: Run, tmp_path: Path, name: str, content: bytes, args: tuple[str, ...], message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = run_cli(*(str(path) if arg == "FILE" else arg for arg in args))
    assert result.code == 2
    assert result.out == ""  # nothing was done, so nothing (not even an empty table) is printed
    assert result.err == f"norma: error: {message}\n".replace("FILE", str(path))


def test_a_bad_rulebook_lists_every_problem_one_a_line_duplicates_included(run_cli: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "rules:\n"
        "  - {id: a, condition_text: x, priority: high}\n"
        "  - {id: a, condition_text: y}\n"  # a duplicate of a rule that is itself bad: reported with the rest
        "  - {id: b}\n",
        encoding="utf-8",
    )
    expected = (
        f"norma: error: {bad}: 3 problems in the rulebook "
        "(fix every rule listed; `norma docs store` shows the format):\n"
        f"{bad}:2:42: rules[0] (a).priority: Input should be a valid integer, unable to parse string as an integer\n"
        f"{bad}:3:10: rules[1] (a).id: duplicate of rules[0]\n"
        f"{bad}:4:5: rules[2] (b).condition_text: Field required\n"
    )
    for args in (("check", "--rules", str(bad), "-m", "hi", "-o", "hello"), ("match", "--rules", str(bad), "hi")):
        result = run_cli(*args)
        assert (result.code, result.out, result.err) == (2, "", expected), args
    assert "nothing imported" not in expected  # that is what `norma rules import` says: it imports


def test_an_unterminated_quote_is_reported_where_it_opens(run_cli: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text('rules:\n  - id: a\n    condition_text: "never closed\n    priority: 1\n', encoding="utf-8")
    result = run_cli("check", "--rules", str(bad), "-m", "hi", "-o", "hello")
    assert (result.code, result.err) == (
        2,
        f"norma: error: {bad}:3:21: not valid YAML: found unexpected end of stream while scanning a "
        "quoted scalar that starts here\n",
    )


def test_serve_on_a_busy_port_says_so_before_anything_else(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "norma", "serve", "--port", str(port), "--db", f"sqlite:///{tmp_path}/s.db"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"norma: error: the server could not start on 127.0.0.1:{port}: Address already in use (stop what uses it, "
        "or pass --port)\n"
    )


def test_the_docs_say_what_make_run_runs() -> None:
    for doc in (REPO / "docs" / "cli.md", REPO / "examples" / "README.md"):
        text = " ".join(doc.read_text(encoding="utf-8").split())
        assert (
            "`make run` starts `norma serve --demo`" in text
            or "`make run` starts the service instead: `norma serve --demo`" in text
        ), doc
        assert "(`make run`)" not in text, doc
        assert "`make run` runs it" not in text, doc
