"""``norma serve`` option checking (in process: nothing is started when an option is bad)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate-limit", "-1"], "--rate-limit"),
        (["--max-body-bytes", "10"], "--max-body-bytes"),
        (["--timeout", "0"], "--timeout"),
        (["--header-timeout", "0"], "--header-timeout"),
        (["--body-timeout", "-1"], "--body-timeout"),
        (["--max-header-bytes", "10"], "--max-header-bytes"),
        (["--max-head-bytes", "100"], "--max-head-bytes"),
        (["--max-header-bytes", "8192", "--max-head-bytes", "4096"], "--max-head-bytes"),
        (["--max-connections", "0"], "--max-connections"),
        (["--auth-failure-rate", "-1"], "--auth-failure-rate"),
        (["--auth-failure-burst", "0"], "--auth-failure-burst"),
        (["--rate-burst", "0"], "--rate-burst"),
        (["--workers", "0"], "--workers"),
        (["--port", "70000"], "--port"),
        (["--store-read-timeout", "0"], "--store-read-timeout"),
        (["--store-read-timeout", "10", "--store-write-timeout", "5"], "--store-write-timeout"),
        (["--stale-for", "-1"], "--stale-for"),
    ],
)
def test_bad_options_exit_2_without_starting(run_cli: Callable[..., CliResult], args: list[str], message: str) -> None:
    result = run_cli("serve", *args)
    assert result.code == 2
    assert result.err.startswith("norma: error:")
    assert message in result.err


def test_demo_without_rulebooks_exits_2(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    result = run_cli("serve", "--demo", "--examples", str(tmp_path), "--db", f"sqlite:///{tmp_path / 'n.db'}")
    assert result.code == 2
    assert "no rulebooks to load" in result.err


def test_help_names_every_option(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("serve", "--help")
    assert result.code == 0
    for option in (
        "--host",
        "--port",
        "--workers",
        "--db",
        "--log-level",
        "--demo",
        "--cors-origin",
        "--max-header-bytes",
        "--max-head-bytes",
        "--header-timeout",
        "--body-timeout",
        "--max-connections",
        "--auth-failure-rate",
        "--auth-failure-burst",
        "--store-connect-timeout",
        "--store-read-timeout",
        "--store-write-timeout",
        "--stale-for",
    ):
        assert option in result.out
