"""Ctrl-C is not bad input: every command interrupted exits 130 with one line, ``norma: interrupted``, and a
``--engine pool`` batch stops at once (its workers' chunks interrupted, the queued ones cancelled), without a
traceback from each worker (``norma check --batch`` then says what it wrote: tests/cli/test_check_interrupt.py).
The tests wait on events (the command blocked on its input, the workers' calls received), never on a pause, so a
loaded machine only makes them slower."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from norma.cli import main
from norma.cli._app import cli
from tests._llm_server import FakeLLMServer
from tests.conftest import EXAMPLES, REPO

BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")


# A shell starts a foreground command with SIGINT at its default, whatever the shell itself does with it; the test
# process may ignore SIGINT (a process started while another test's pool batch ignored it inherits that), and a
# Python started with SIGINT ignored never turns Ctrl-C into KeyboardInterrupt. So the command is started as a shell
# would: SIGINT reset to its default, then norma exec'd in the same process.
_AS_A_SHELL_WOULD = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'norma', *sys.argv[1:]])"
)


def _start(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _AS_A_SHELL_WOULD, *args],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: killpg reaches it (and its workers) as Ctrl-C would
        **kwargs,  # type: ignore[call-overload]
    )


@pytest.mark.parametrize("exc", [KeyboardInterrupt, click.exceptions.Abort])
def test_an_interrupt_inside_any_command_exits_130(
    exc: type[BaseException], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted() -> None:
        if exc is click.exceptions.Abort:  # click turns Ctrl-C into Abort (from the KeyboardInterrupt)
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt:
                raise click.exceptions.Abort() from None
        raise exc

    monkeypatch.setitem(cli.commands, "interrupted", click.Command("interrupted", callback=interrupted))
    assert main(["interrupted"]) == 130
    assert capsys.readouterr().err.split() == ["norma:", "interrupted"]  # after the newline that ends the ^C line


def test_an_abort_that_is_no_interrupt_stays_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def aborted() -> None:
        raise click.exceptions.Abort()

    monkeypatch.setitem(cli.commands, "aborted", click.Command("aborted", callback=aborted))
    assert main(["aborted"]) == 2
    assert capsys.readouterr().err.splitlines() == ["norma: error: aborted"]


def _reading_stdin(pid: int) -> bool:
    """Whether a thread of process ``pid`` is blocked reading its standard input (``read(0, ...)``: syscall 0 with
    fd 0 on x86-64, 63 on arm64), as /proc tells."""
    read = {"x86_64": "0", "aarch64": "63"}.get(platform.machine(), "0")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            call = (task / "syscall").read_text(encoding="ascii").split()
        except OSError:  # the thread ended
            continue
        if len(call) > 1 and call[0] == read and int(call[1], 16) == 0:
            return True
    return False


def _wait_until(done: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> None:
    """Poll ``done`` until it holds; fail if the process ends first (the 5-minute limit only guards a hang)."""
    deadline = time.monotonic() + 300
    while not done():
        assert proc.poll() is None, f"the command ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"not {what} after 5 minutes"
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc to see the command blocked on its input")
def test_ctrl_c_while_reading_stdin_exits_130() -> None:
    proc = _start("check", "--rules", BANKING, "--batch", "-")  # waits for its turns on stdin
    _wait_until(lambda: _reading_stdin(proc.pid), proc, "reading its input")  # imported and reading: an event
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["norma: interrupted"]
    assert out == ""


_JUDGED = """\
format: norma.rulebook/v1
rules:
  - id: tone
    condition_text: customer writes anything
    checks:
      - id: polite
        kind: judge
        criterion: the answer is polite
        when: always
"""


@pytest.mark.model
def test_ctrl_c_stops_a_pool_batch_whose_workers_are_inside_their_chunks(tmp_path: Path) -> None:
    # Every turn asks a judge that does not answer while the test runs (and the client would wait an hour): a chunk
    # cannot end by itself, so the command ends only if Ctrl-C interrupts the workers' chunks and cancels the queued
    # ones (before that fix, each chunk ran to its end). Both workers are known to be inside a chunk when the judge
    # has received two calls: an event, not a pause.
    rules = tmp_path / "judged.yaml"
    rules.write_text(_JUDGED, encoding="utf-8")
    batch = tmp_path / "many.jsonl"
    batch.write_text("".join(json.dumps({"message": f"hello {i}", "output": "hi"}) + "\n" for i in range(400)))
    with FakeLLMServer() as llm:
        llm.slow(3600, times=1000)
        env = {
            **os.environ, "NORMA_LLM_URL": llm.openai_url, "NORMA_LLM_MODEL": "judge", "NORMA_LLM_TIMEOUT": "3600",
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        }  # fmt: skip
        proc = _start(
            "check", "--rules", str(rules), "--batch", str(batch), "--engine", "pool", "--workers", "2",
            "--format", "json", env=env,
        )  # fmt: skip
        _wait_until(lambda: len(llm.requests) >= 2, proc, "both workers asked the judge")
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the command and its workers
        out, err = proc.communicate(timeout=120)  # a chunk run to its end would wait for the judge's hour
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [  # no traceback from a worker
        "norma: interrupted: 0 of 400 records written to stdout, marked incomplete "
        "(only --format jsonl --out FILE can be resumed)"
    ]
    document = json.loads(out)  # what finished (nothing: every chunk waited for the judge), marked incomplete
    assert (document["incomplete"], document["input_records"], document["records"]) == (True, 400, 0)
