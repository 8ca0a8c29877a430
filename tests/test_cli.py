"""The CLI skeleton: version, help, formats, exit codes and one-line errors; docs cover every command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest

from norma import __version__
from norma.cli import cli
from tests.conftest import REPO, CliResult

Run = Callable[..., CliResult]


def _commands(group: click.Group, prefix: str = "norma") -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # the lazy commands too (get_command imports them)
        command = group.get_command(ctx, name)
        assert command is not None, name
        path = f"{prefix} {name}"
        yield path, command
        if isinstance(command, click.Group):
            yield from _commands(command, path)


def _command_paths(group: click.Group) -> Iterator[str]:
    return (path for path, _ in _commands(group))


def test_version(run_cli: Run) -> None:
    result = run_cli("--version")
    assert result.code == 0
    assert result.out.strip() == f"norma {__version__}"


def test_help_lists_commands_and_exit_codes(run_cli: Run) -> None:
    result = run_cli("--help")
    assert result.code == 0
    assert "demo" in result.out
    assert "Exit codes" in result.out


def test_unknown_option_exits_2_with_one_line(run_cli: Run) -> None:
    result = run_cli("--no-such-option")
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert "--no-such-option" in result.err
    assert result.err.startswith("norma: error: ")


def test_unknown_command_exits_2_with_one_line(run_cli: Run) -> None:
    result = run_cli("frobnicate")
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert "frobnicate" in result.err


def test_an_unknown_command_names_the_nearest_ones(run_cli: Run) -> None:
    cases = {
        ("rubrics",): "norma: error: No such command 'rubrics'. Did you mean 'rubric'?\n",
        ("rule",): "norma: error: No such command 'rule'. Did you mean 'rules'?\n",
        ("ru",): "norma: error: No such command 'ru'. Did you mean 'rubric' or 'rules'?\n",
        ("rules", "evl"): "norma: error: No such command 'evl'. Did you mean 'eval'?\n",
        ("frobnicate",): "norma: error: No such command 'frobnicate'. 'norma --help' lists the commands.\n",
        ("rules", "zzz"): "norma: error: No such command 'zzz'. 'norma rules --help' lists the commands.\n",
        # `norma audit X` audits the request file X, unless X is no file and close to one of its commands
        ("audit", "shema"): "norma: error: No such command 'shema'. Did you mean 'schema'?\n",
        ("audit", "rulse"): "norma: error: No such command 'rulse'. Did you mean 'rules'?\n",
    }
    for args, expected in cases.items():
        result = run_cli(*args)
        assert (result.code, result.out, result.err) == (2, "", expected), args


def test_a_request_file_named_like_an_audit_command_is_audited(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shema").write_text('{"input": "hi", "output": "hello"}', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = run_cli("audit", "shema", "--no-embeddings", "--format", "json")
    assert result.code in (0, 1), result.err
    assert "result" in result.out
    missing = run_cli("audit", str(tmp_path / "nowhere.json"))
    assert (missing.code, "nowhere.json" in missing.err, "Did you mean" in missing.err) == (2, True, False)


def test_every_group_suggests_its_subcommands(run_cli: Run) -> None:
    groups = [(path, command) for path, command in _commands(cli) if isinstance(command, click.Group)]
    # `norma audit X` runs `norma audit run X` (X is a request file) unless X is one of its commands
    checked = [path for path, _ in groups if path != "norma audit"]
    assert checked == ["norma keys", "norma llm", "norma names", "norma rubric", "norma rules"]
    for path, group in groups:
        if path == "norma audit":
            continue
        name = group.list_commands(click.Context(group))[-1]
        typo = name[:-1] + "x"
        result = run_cli(*path.split()[1:], typo)
        assert result.code == 2, path
        assert result.err.startswith(f"norma: error: No such command {typo!r}. Did you mean {name!r}"), result.err


def test_missing_input_exits_2_naming_it(run_cli: Run, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = run_cli("demo", "--examples", str(missing))
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert "nowhere" in result.err
    assert "Traceback" not in result.err


def test_an_argument_that_is_not_utf8_exits_2_naming_it(run_cli: Run, examples_dir: Path) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates; they crashed the tokenizer or the output (issue 23)."""
    rules = str(examples_dir / "matching" / "support_rules.yaml")
    result = run_cli("match", "--rules", rules, "I lost my card \udcff")
    assert result.code == 2
    assert result.err == "norma: error: argument 4 is not valid UTF-8 text (norma reads its arguments as UTF-8)\n"


def test_demo_exits_0_and_speaks_json(run_cli: Run) -> None:
    table = run_cli("demo")
    assert table.code == 0
    assert "demo" in table.out
    as_json = run_cli("--format", "json", "demo")
    assert as_json.code == 0
    payload = json.loads(as_json.out)
    assert payload["version"] == __version__
    local = run_cli("demo", "--format", "json")
    assert json.loads(local.out)["version"] == __version__


def test_console_script_runs_in_a_real_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "norma", "--bogus"], capture_output=True, text=True, check=False, cwd=REPO
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_every_command_is_documented() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    headings = {m.group(1).strip() for m in re.finditer(r"^#+\s+`([^`]+)`", text, flags=re.MULTILINE)}
    undocumented = [path for path in _command_paths(cli) if path not in headings]
    assert not undocumented, f"commands missing from docs/cli.md: {undocumented}"
