"""``norma check --batch`` stopped mid-run loses nothing it finished (issue #59): ``--format jsonl`` writes each turn
as it is checked, SIGINT (exit 130) or SIGTERM (exit 143) leaves every finished row whole in ``--out FILE`` with one
stderr line saying how many and how to go on, and ``--resume`` finishes the file as one run would have written it.
The other formats are written at the end, atomically, marked incomplete when the run was stopped.

The interrupted commands are real processes sent real signals. The tests wait on events (rows in the output file,
requests received by a fake judge), never on a pause: a loaded machine only makes them slower.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from norma.cli import main
from tests._llm_server import FakeLLMServer
from tests.cli.test_interrupt import _JUDGED, _start, _wait_until
from tests.conftest import EXAMPLES, CliResult

pytestmark = pytest.mark.model

Run = Callable[..., CliResult]
BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
TURNS = EXAMPLES / "turns" / "banking.jsonl"
LONG = 600
"""Turns of the long batch: at a few milliseconds each, seconds of work, so a signal sent once the first rows are
written lands mid-run."""
HINT = (
    "(--resume goes on with the --out FILE of an interrupted run of the same command (the same input, --shard, "
    "--audit and --fail-on); give that FILE, or drop --resume to check every turn again)"
)


def _turns(count: int, *, bad: dict[int, str] | None = None) -> str:
    """``count`` turns of examples/turns/banking.jsonl, over and over, each with an id of its own; ``bad``: the
    text of some lines (1-based) instead."""
    examples = [json.loads(line) for line in TURNS.read_text("utf-8").splitlines()]
    lines = []
    for i in range(count):
        turn = dict(examples[i % len(examples)])
        turn["id"] = f"{turn['id']}-{i}"
        lines.append((bad or {}).get(i + 1, json.dumps(turn)))
    return "".join(line + "\n" for line in lines)


def _rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines output; each line must be a whole JSON object ending with its line end."""
    text = path.read_text("utf-8")
    assert text == "" or text.endswith("\n"), f"a line cut short: {text[-80:]!r}"
    rows = [json.loads(line) for line in text.split("\n")[:-1]]
    assert all(isinstance(row, dict) for row in rows)
    return rows


def _complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.fixture(scope="module")
def long_batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The long batch and the output of one run over all of it, not interrupted."""
    folder = tmp_path_factory.mktemp("long")
    batch = folder / "long.jsonl"
    batch.write_text(_turns(LONG), encoding="utf-8")
    whole = folder / "whole.jsonl"
    command = ["check", "--rules", BANKING, "--batch", str(batch), "--engine", "local", "--format", "jsonl"]
    assert main([*command, "--out", str(whole)]) == 1  # the examples fail half of the turns
    return batch, whole


def _totals(rows: list[dict[str, Any]], bad: int = 0) -> str:
    verdicts = [row["verdict"] for row in rows]
    return (
        f"{len(rows) + bad} records: {verdicts.count('pass')} passed, {verdicts.count('fail')} failed, "
        f"{verdicts.count('skip')} skipped, {bad} bad"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "code", "said"),
    [(signal.SIGINT, 130, ""), (signal.SIGTERM, 143, " (SIGTERM)")],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_mid_batch_keeps_every_finished_turn_then_resume_finishes_it(
    run_cli: Run, tmp_path: Path, long_batch: tuple[Path, Path], signum: int, code: int, said: str
) -> None:
    batch, whole = long_batch
    out = tmp_path / "out.jsonl"
    command = ("check", "--rules", BANKING, "--batch", str(batch), "--engine", "local", "--format", "jsonl")
    proc = _start(*command, "--out", str(out))
    _wait_until(lambda: _complete_lines(out) >= 20, proc, "20 turns were written")  # the first turns: an event
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal
    else:
        os.kill(proc.pid, signal.SIGTERM)  # as `kill PID`, `timeout`, a CI runner or a container stopping it
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == code, stderr
    assert stdout == ""
    kept = _rows(out)  # every line whole
    written = len(kept)
    assert 20 <= written < LONG
    assert stderr.splitlines() == [
        f"norma: interrupted{said}: {written} of {LONG} records written to {out}; "
        f"add --resume to the same command to check the other {LONG - written}"
    ]
    full = _rows(whole)
    assert kept == full[:written]  # the first turns, in input order, as one run checks them

    resumed = run_cli(*command, "--out", str(out), "--resume")
    assert resumed.code == 1, resumed.err  # the totals and the exit code count every row of the file
    assert resumed.err.splitlines() == [
        f"norma: resumed: {written} turns were in {out}, {LONG - written} records done now; {_totals(full)}"
    ]
    final = _rows(out)
    assert [row["line"] for row in final] == list(range(1, LONG + 1))  # one row per turn, in order
    assert final == full


def test_resume_drops_a_line_cut_short_and_checks_it_again(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "turns.jsonl"
    batch.write_text(_turns(20), encoding="utf-8")
    command = ("check", "--rules", BANKING, "--batch", str(batch), "--engine", "local", "--format", "jsonl")
    whole = tmp_path / "whole.jsonl"
    assert run_cli(*command, "--out", str(whole)).code == 1
    lines = whole.read_bytes().split(b"\n")
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"\n".join(lines[:7]) + b"\n" + lines[7][: len(lines[7]) // 2])  # killed writing line 8
    resumed = run_cli(*command, "--out", str(out), "--resume")
    assert resumed.code == 1, resumed.err
    assert resumed.err.splitlines() == [
        f"norma: resumed: 7 turns were in {out}, 13 records done now; {_totals(_rows(whole))}"
    ]
    assert out.read_bytes() == whole.read_bytes()


def test_resume_counts_the_bad_records_once_and_a_missing_file_is_a_fresh_start(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "turns.jsonl"
    batch.write_text(_turns(12, bad={3: "{not json", 9: json.dumps({"message": "no output"})}), encoding="utf-8")
    command = ("check", "--rules", BANKING, "--batch", str(batch), "--engine", "local", "--format", "jsonl")
    whole = tmp_path / "whole.jsonl"
    assert run_cli(*command, "--out", str(whole)).code == 2  # bad input wins
    full = _rows(whole)
    assert len(full) == 10
    out = tmp_path / "out.jsonl"
    out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in full[:4]), encoding="utf-8")
    resumed = run_cli(*command, "--out", str(out), "--resume")
    assert resumed.code == 2
    errors = [line for line in resumed.err.splitlines() if line.startswith("norma: error:")]
    assert [error.split(":")[3] for error in errors] == ["3", "9"]  # norma: error: FILE:3: ...
    assert resumed.err.splitlines()[-1] == (
        f"norma: resumed: 4 turns were in {out}, 8 records done now; {_totals(full, bad=2)}"
    )
    assert _rows(out) == full
    fresh = tmp_path / "fresh.jsonl"  # nothing there yet: every turn is checked
    again = run_cli(*command, "--out", str(fresh), "--resume")
    assert again.code == 2
    assert again.err.splitlines()[-1] == (
        f"norma: resumed: nothing was in {fresh}, 12 records done now; {_totals(full, bad=2)}"
    )
    assert fresh.read_bytes() == whole.read_bytes()


def _foreign_files(whole: Path) -> dict[str, tuple[str, str]]:
    """Files that are not an interrupted output of the batch: ``{name: (content, the error's words)}``."""
    rows = whole.read_text("utf-8").splitlines()
    other = json.loads(rows[0])
    other["message"] = "another message"
    return {
        "not-json": ("{not json\n", "1: not valid JSON (Expecting property name enclosed in double quotes)"),
        "turns": (_turns(2), "1: not a row of norma check --format jsonl"),
        "another-input": (json.dumps(other) + "\n", "1: the message or the id is not that of line 1 of {batch}"),
        "a-gap": (rows[1] + "\n", "1: the row of line 2 of its input, where line 1 comes next"),
        "too-many": ("\n".join([*rows, rows[0]]) + "\n", "21: one row more than the 20 turns of {batch}"),
    }  # fmt: skip


@pytest.mark.parametrize("case", ["not-json", "turns", "another-input", "a-gap", "too-many"])
def test_resume_refuses_a_file_that_is_not_an_output_of_this_batch(run_cli: Run, tmp_path: Path, case: str) -> None:
    batch = tmp_path / "turns.jsonl"
    batch.write_text(_turns(20), encoding="utf-8")
    command = ("check", "--rules", BANKING, "--batch", str(batch), "--engine", "local", "--format", "jsonl")
    whole = tmp_path / "whole.jsonl"
    assert run_cli(*command, "--out", str(whole)).code == 1
    content, why = _foreign_files(whole)[case]
    out = tmp_path / "out.jsonl"
    out.write_text(content, encoding="utf-8")
    result = run_cli(*command, "--out", str(out), "--resume")
    assert result.code == 2
    number, _, words = why.format(batch=batch).partition(": ")
    assert result.err.splitlines() == [
        f"norma: error: {out}:{number}: {words}: not the --format jsonl output of this batch {HINT}"
    ]
    assert out.read_text("utf-8") == content  # left as it was
    audited = run_cli(*command, "--out", str(whole), "--resume", "--audit")  # the rows were checked without it
    assert audited.code == 2
    assert audited.err.startswith(f"norma: error: {whole}:1: checked without --audit: not the --format jsonl output")


@pytest.mark.parametrize(
    "args",
    [
        ["--format", "json", "--out", "x.json"],
        ["--format", "jsonl"],
        ["--out", "x.txt"],
        ["--format", "sarif", "--out", "x.sarif"],
    ],
    ids=["json-to-a-file", "jsonl-to-stdout", "table-to-a-file", "sarif-to-a-file"],
)
def test_resume_without_format_jsonl_and_out_is_a_usage_error(run_cli: Run, args: list[str]) -> None:
    result = run_cli("check", "--rules", BANKING, "--batch", str(TURNS), "--resume", *args)
    assert result.code == 2
    assert result.err.splitlines() == [
        "norma: error: --resume needs --format jsonl --out FILE (it keeps the turns an interrupted run wrote to FILE "
        "and appends the others; the other formats are written whole when the command ends)"
    ]
    assert result.out == ""


def test_resume_goes_with_batch(run_cli: Run) -> None:
    result = run_cli("check", "--rules", BANKING, "-m", "hi", "-o", "hello", "--resume")
    assert result.code == 2
    assert result.err.splitlines() == [
        "norma: error: --resume goes with --batch (it goes on with an interrupted batch)"
    ]


_ANSWERED = 5
"""Turns whose judge answers at once; the next one's judge does not answer while the test runs."""


def test_an_interrupted_batch_writes_what_it_finished_to_every_format_marked_incomplete(tmp_path: Path) -> None:
    # Every turn asks the judge (a `when: always` check): the first turns' calls are answered, then the judge hangs.
    # Once it has received that call, the batch is inside the next turn: SIGINT there, an event and not a pause.
    rules = tmp_path / "judged.yaml"
    rules.write_text(_JUDGED, encoding="utf-8")
    batch = tmp_path / "many.jsonl"
    token = uuid.uuid4().hex  # messages never asked before: no vote comes from the judge cache
    batch.write_text("".join(json.dumps({"message": f"hello {i} {token}", "output": "hi"}) + "\n" for i in range(50)))
    out = tmp_path / "out.json"
    out.write_text("what an earlier run wrote\n", encoding="utf-8")
    reports = {fmt: tmp_path / f"report.{fmt}" for fmt in ("sarif", "junit", "markdown")}
    with FakeLLMServer() as llm:
        llm.reply(json.dumps({"pass": True, "score": 1.0, "reason": "polite"}), times=_ANSWERED)
        llm.slow(3600, times=1000)
        env = {
            **os.environ, "NORMA_LLM_URL": llm.openai_url, "NORMA_LLM_MODEL": "judge", "NORMA_LLM_TIMEOUT": "3600",
        }  # fmt: skip
        proc = _start(
            "check", "--rules", str(rules), "--batch", str(batch), "--engine", "local", "--format", "json",
            "--out", str(out), *(f"--report={fmt}={path}" for fmt, path in reports.items()), env=env,
        )  # fmt: skip
        _wait_until(lambda: len(llm.requests) > _ANSWERED, proc, "the judge was asked about the next turn")
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stdout == ""
    assert stderr.splitlines() == [
        f"norma: interrupted: {_ANSWERED} of 50 records written to {out}, marked incomplete "
        "(only --format jsonl --out FILE can be resumed)"
    ]
    document = json.loads(out.read_text("utf-8"))  # valid JSON, replaced whole
    assert document["incomplete"] is True
    assert document["input_records"] == 50
    assert (document["records"], document["turns"], document["passed"], document["bad"]) == (
        _ANSWERED,
        _ANSWERED,
        _ANSWERED,
        0,
    )
    assert [row["line"] for row in document["results"]] == list(range(1, _ANSWERED + 1))
    why = f"interrupted (SIGINT) after {_ANSWERED} of 50 records: the other {50 - _ANSWERED} were not checked"
    sarif = json.loads(reports["sarif"].read_text("utf-8"))
    assert sarif["runs"][0]["invocations"] == [
        {
            "executionSuccessful": False, "exitCode": 130, "exitSignalName": "SIGINT",
            "toolExecutionNotifications": [{"level": "error", "message": {"text": why}}],
        }
    ]  # fmt: skip
    assert len(sarif["runs"][0]["properties"]["reports"]) == _ANSWERED
    junit = ET.fromstring(reports["junit"].read_text("utf-8"))
    assert [suite.get("name") for suite in junit.findall("testsuite")][-1] == "incomplete"
    assert junit.find("testsuite[@name='incomplete']/testcase/error").get("message") == why  # type: ignore[union-attr]
    assert (junit.get("tests"), junit.get("errors")) == (str(_ANSWERED + 1), "1")
    assert f"**Incomplete:** {why}." in reports["markdown"].read_text("utf-8").splitlines()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


def test_merge_refuses_the_output_of_an_interrupted_run(run_cli: Run, tmp_path: Path) -> None:
    shard = run_cli("check", "--rules", BANKING, "--batch", str(TURNS), "--engine", "local", "--format", "json")
    part = tmp_path / "part1.json"
    part.write_text(json.dumps({"incomplete": True, "input_records": 9, **json.loads(shard.out)}), encoding="utf-8")
    merged = run_cli("merge", str(part))
    assert merged.code == 2
    assert merged.err.splitlines() == [
        f"norma: error: {part}: the output of an interrupted run (incomplete): merged, the records it lacks would go "
        "unnoticed (run that shard again; a --format jsonl --out FILE run is finished with --resume)"
    ]


def test_an_out_file_is_replaced_at_once_keeping_its_permissions(run_cli: Run, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("what an earlier run wrote\n", encoding="utf-8")
    out.chmod(0o640)
    before = out.stat().st_ino
    link = tmp_path / "link.json"
    link.symlink_to(out)
    result = run_cli("check", "--rules", BANKING, "--batch", str(TURNS), "--engine", "local", "--format", "json",
                     "--out", str(link))  # fmt: skip
    assert result.code == 1, result.err
    assert json.loads(out.read_text("utf-8"))["records"] == 8
    assert out.stat().st_ino != before  # a new file renamed over the old one, never the old one rewritten in place
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert link.is_symlink()  # the link still points at the file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "out.json"]  # no temporary file left
