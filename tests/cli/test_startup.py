"""Start-up: `norma --help`, `--version`, `<cmd> --help` and TAB completion import no capability (issue 24).

What they import is asserted, not how long they take (the figures are in benchmarks/cli_startup.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import click
import pytest

from norma.cli import cli
from norma.cli._lazy import LazyGroup
from tests.conftest import REPO

HEAVY = (
    "numpy",
    "onnxruntime",
    "httpx",
    "pydantic",
    "jsonschema",
    "stdnum",
    "norma.audit",
    "norma.checks",
    "norma.matching",
    "norma.store",
    "norma.names",
    "norma.mcp_server",
    "mcp",
)

_PROBE = """
import json, os, sys
from norma.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
with open(os.environ["NORMA_TEST_PROBE"], "w") as out:
    json.dump(sorted(sys.modules), out)
"""


def _modules_after(*args: str, env: dict[str, str] | None = None) -> set[str]:
    """The modules a fresh interpreter has imported after running ``norma ARGS``."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "modules.json"
        subprocess.run(
            [sys.executable, "-c", _PROBE, *args],
            cwd=REPO,
            env={**os.environ, **(env or {}), "NORMA_TEST_PROBE": str(out)},
            capture_output=True,
            check=False,
            timeout=60,
        )
        return set(json.loads(out.read_text(encoding="utf-8")))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("--version",),
        *[(name, "--help") for name in sorted(cli.lazy) if name != "audit"],  # type: ignore[attr-defined]
        ("audit", "--help"),
        ("rules", "list", "--help"),
        ("rules", "import", "--help"),
        ("keys", "create", "--help"),
        ("names", "score", "--help"),
        ("rubric", "eval", "--help"),
        ("llm", "check", "--help"),
    ],
)
def test_help_and_version_import_no_capability(args: tuple[str, ...]) -> None:
    modules = _modules_after(*args)
    assert "norma.cli" in modules
    assert _heavy(modules) == []


def test_the_control_of_the_probe_sees_a_capability_when_a_command_runs() -> None:
    """The probe above can fail: running a command that needs numpy does import it."""
    modules = _modules_after("names", "generate", "Anna", "--count", "2", "--seed", "1")
    assert "numpy" in modules
    assert "norma.names" in modules


def test_a_one_message_command_does_not_import_the_batch_engines(tmp_path: Path) -> None:
    """The engine options' defaults are parsed without norma.batch (which imports audit, Ray's glue...): a
    one-message match imports matching, not the batch layer nor the audit."""
    rules = str(REPO / "examples" / "matching" / "support_rules.yaml")
    modules = _modules_after("match", "--rules", rules, "hello", env={"NORMA_CACHE_DIR": str(tmp_path / "cache")})
    assert "norma.matching" in modules  # the control: the command ran
    assert not [m for m in modules if m == "norma.batch" or m.startswith(("norma.batch.", "norma.audit"))]


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [
        ("norma ru", "1", "plain,rubric\nplain,rules\n"),
        ("norma rules de", "2", "plain,delete\n"),
    ],
)
def test_bash_completion_answers_without_capabilities(words: str, cword: str, expected: str) -> None:
    env = {"_NORMA_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
    proc = subprocess.run(
        [sys.executable, "-m", "norma"],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, "")
    assert _heavy(_modules_after(env=env)) == []


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_exist_for_the_documented_shells(shell: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "norma"],
        cwd=REPO,
        env={**os.environ, "_NORMA_COMPLETE": f"{shell}_source"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0
    assert "_NORMA_COMPLETE" in proc.stdout
    docs = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"_NORMA_COMPLETE={shell}_source norma" in docs


def _lazy_groups() -> list[tuple[str, LazyGroup]]:
    ctx = click.Context(cli)
    groups: list[tuple[str, LazyGroup]] = [("norma", cli)]  # type: ignore[list-item]
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        if isinstance(command, LazyGroup) and command.lazy:
            groups.append((f"norma {name}", command))
    return groups


@pytest.mark.parametrize(("path", "group"), _lazy_groups(), ids=lambda value: value if isinstance(value, str) else "")
def test_the_lazy_table_says_what_each_command_says(path: str, group: LazyGroup) -> None:
    for name, entry in group.lazy.items():
        command = entry.load()
        assert command.name == name, path
        assert inspect_help(command) == entry.help, f"{path} {name}: update the lazy table's help"


def inspect_help(command: click.Command) -> str:
    """The first paragraph of a command's help, on one line (what the table keeps)."""
    first = (command.help or "").split("\n\n")[0]
    return " ".join(first.split())


def test_spelt_out_constants_equal_the_library_ones() -> None:
    from norma import llm, names, store
    from norma.cli import _llm, _names, _output

    assert (_llm.KIND_ENV, _llm.MODEL_ENV, _llm.URL_ENV) == (llm.KIND_ENV, llm.MODEL_ENV, llm.URL_ENV)
    assert (_names.MAX_HASH_SEED, _names.MAX_HASH_SEEDS, _names.DEFAULT_RULE_PERCENTAGE) == (
        names.MAX_HASH_SEED,
        names.MAX_HASH_SEEDS,
        names.DEFAULT_RULE_PERCENTAGE,
    )
    assert _output.DB_URL_ENV == store.DB_URL_ENV
