"""README.md stays true: every Python block runs, every `norma` command line in it runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
COMMAND_LINES = [
    line.split("  #")[0].strip()
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL)
    for line in block.splitlines()
    if line.strip().startswith("norma ")
]


def test_quick_start_is_exactly_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", quick, flags=re.DOTALL)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make run", "make test"]


INIT_FIRST = "# in a folder where `norma init` copied the starter project"
"""A block starting so runs in an empty folder after ``norma init`` (as a reader outside the checkout would)."""


@pytest.mark.parametrize("code", PYTHON_BLOCKS, ids=[f"python-{i}" for i in range(len(PYTHON_BLOCKS))])
def test_python_example_runs(code: str, tmp_path: Path) -> None:
    cwd = REPO
    if code.startswith(INIT_FIRST):
        cwd = tmp_path
        init = [sys.executable, "-m", "norma", "init", str(tmp_path)]
        subprocess.run(init, capture_output=True, text=True, check=True, timeout=120)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


def test_no_python_example_needs_the_checkouts_examples_but_through_init() -> None:
    """The turn check example works outside the checkout: it starts from the starter project of ``norma init``."""
    turn_check = [code for code in PYTHON_BLOCKS if "norma.open(" in code]
    assert turn_check
    assert all(code.startswith(INIT_FIRST) and "examples/" not in code for code in turn_check)


@pytest.mark.parametrize("line", COMMAND_LINES)
def test_command_example_runs(line: str) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(line, shell=True, cwd=REPO, capture_output=True, text=True, check=False, env=env, timeout=120)
    assert proc.returncode in (0, 1), f"{line!r} exited {proc.returncode}: {proc.stderr}"
    assert "Traceback" not in proc.stderr
