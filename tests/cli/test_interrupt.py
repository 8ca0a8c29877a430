"""Ctrl-C is not bad input: every command interrupted exits 130 with one line, ``norma: interrupted``, and a
``--engine pool`` batch stops within about a second (its workers' chunks interrupted, the queued ones cancelled),
without a traceback from each worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from norma.cli import main
from norma.cli._app import cli
from tests.conftest import EXAMPLES, REPO

BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")


def _start(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "norma", *args],
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


def test_ctrl_c_while_reading_stdin_exits_130() -> None:
    proc = _start("check", "--rules", BANKING, "--batch", "-")  # waits for its turns on stdin
    time.sleep(3.0)  # imported and reading
    assert proc.poll() is None
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["norma: interrupted"]
    assert out == ""


@pytest.mark.model
def test_ctrl_c_stops_a_pool_batch_within_seconds(tmp_path: Path) -> None:
    turns = (EXAMPLES / "turns" / "banking.jsonl").read_text(encoding="utf-8")
    batch = tmp_path / "many.jsonl"
    batch.write_text(turns * 400, encoding="utf-8")  # 3,200 turns: about a minute of work on two cores
    proc = _start(
        "check", "--rules", BANKING, "--batch", str(batch), "--engine", "pool", "--workers", "2", "--format", "json"
    )
    time.sleep(8.0)  # the workers started and are checking chunks (before the fix, each chunk ran to its end)
    assert proc.poll() is None, proc.communicate()
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the command and its workers
    out, err = proc.communicate(timeout=60)
    stopped = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["norma: interrupted"]  # no traceback from a worker
    assert out == ""
    assert stopped < 2.5, f"stopped {stopped:.2f} s after SIGINT"
