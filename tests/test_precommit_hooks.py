"""The pre-commit hooks (``.pre-commit-hooks.yaml``), run by pre-commit itself against a temporary git repository.

pre-commit installs the hooks' environment by pip-installing norma from a snapshot of this checkout (its files as
they are now, in a repository of one commit): about 25 s. Every test runs ``pre-commit run`` with a config naming
the snapshot, so that environment is installed once in the module's ``PRE_COMMIT_HOME`` and reused (``try-repo``,
which runs a repository's hooks as they are declared, would install it again in a new temporary store at every
call: a config listing the hooks by id alone runs them the same way).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.audit.test_reports import CHATTY, FAILING, PASSING
from tests.conftest import EXAMPLES, REPO

pytestmark = pytest.mark.slow

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "norma tests",
    "GIT_AUTHOR_EMAIL": "tests@norma.invalid",
    "GIT_COMMITTER_NAME": "norma tests",
    "GIT_COMMITTER_EMAIL": "tests@norma.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env={**os.environ, **_GIT_ENV})


def _commit_all(folder: Path) -> None:
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "snapshot")


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's files (tracked and new, not ignored) as a git repository with one commit."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout.decode()
    target = tmp_path_factory.mktemp("norma-hooks")
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    _commit_all(target)
    return target


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def _jsonl(*records: dict[str, str]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository with passing and failing files of each kind, and files the hooks must leave alone."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(EXAMPLES / "audit" / "docs", root / "norms")
    (root / "outputs.jsonl").write_text(_jsonl(PASSING, CHATTY), encoding="utf-8")
    (root / "agent").mkdir()
    (root / "agent" / "outputs-bad.jsonl").write_text(_jsonl(PASSING, FAILING), encoding="utf-8")
    (root / "data").mkdir()
    (root / "data" / "records.jsonl").write_text("not an audit request\n", encoding="utf-8")  # matches no hook
    (root / "rubrics").mkdir()
    shutil.copy(EXAMPLES / "rubrics" / "code_review.json", root / "rubrics" / "good.json")
    bad_rubric = {"version": "1", "goal_text": "g", "criteria": [{"id": "c", "description": "d", "weight": -1}]}
    (root / "rubrics" / "bad.json").write_text(json.dumps(bad_rubric), encoding="utf-8")
    (root / "rulebooks").mkdir()
    shutil.copy(EXAMPLES / "rulebooks" / "banking-support.yaml", root / "rulebooks" / "good.yaml")
    (root / "rulebooks" / "bad.yaml").write_text("rules:\n  - id: x\n    condition_text: ''\n", encoding="utf-8")
    _commit_all(root)
    return root


def _pre_commit(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)  # the hooks run the norma pre-commit installed, not this checkout's src/
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _rev(repo: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _run_config(project: Path, home: Path, config: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    """``pre-commit run`` with this config (its environments are kept in ``home``, unlike try-repo's)."""
    config_file = project / ".pre-commit-config.yaml"
    config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    try:
        return _pre_commit(project, home, "run", "--verbose", *args)
    finally:
        config_file.unlink()


def _hooks_config(hooks_repo: Path, *hooks: dict[str, Any]) -> dict[str, Any]:
    return {"repos": [{"repo": str(hooks_repo), "rev": _rev(hooks_repo), "hooks": list(hooks)}]}


def test_hook_ids_and_commands() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"norma-audit", "norma-rubrics", "norma-rulebooks", "norma-rules-diff"}
    # the diff matches turns: it needs the model's weights, which pre-commit cannot install (docs/ci.md)
    assert {hook_id: hook["language"] for hook_id, hook in hooks.items()} == {
        "norma-audit": "python",
        "norma-rubrics": "python",
        "norma-rulebooks": "python",
        "norma-rules-diff": "system",
    }
    assert hooks["norma-rulebooks"]["entry"] == "norma rules validate"
    assert hooks["norma-rules-diff"]["entry"] == "norma rules diff-git --fail-on newly-failing"
    assert hooks["norma-rules-diff"]["files"] == hooks["norma-rulebooks"]["files"]
    matches = {hook_id: re.compile(hook["files"]) for hook_id, hook in hooks.items()}
    assert matches["norma-audit"].search("agent/outputs-bad.jsonl")
    assert matches["norma-audit"].search("outputs/case.json")
    assert not matches["norma-audit"].search("data/records.jsonl")
    assert matches["norma-rubrics"].search("rubrics/good.json")
    assert not matches["norma-rubrics"].search("rubrics/inputs/outcome.json")
    assert matches["norma-rulebooks"].search("support.rulebook.yaml")
    assert not matches["norma-rulebooks"].search("rulebooks/banking.labelled.jsonl")


def test_every_hook_fails_every_bad_file_and_leaves_the_others(
    project: Path, pre_commit_home: Path, hooks_repo: Path
) -> None:
    """One run of every hook, as declared (what ``try-repo`` runs), over the whole project."""
    every = [{"id": hook_id} for hook_id in ("norma-audit", "norma-rubrics", "norma-rulebooks")]
    result = _run_config(project, pre_commit_home, _hooks_config(hooks_repo, *every), "--all-files")
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    sections = dict(re.findall(r"- hook id: (norma-[a-z]+)\n(.*?)(?=\nnorma |\Z)", out, flags=re.DOTALL))
    assert set(sections) == {"norma-audit", "norma-rubrics", "norma-rulebooks"}
    assert "FAIL  agent/outputs-bad.jsonl:2" in sections["norma-audit"]
    assert "PASS  outputs.jsonl:1" in sections["norma-audit"]
    assert "records.jsonl" not in out
    assert "rubrics/bad.json:1:91: criteria[0].weight" in sections["norma-rubrics"]
    assert "\nrulebooks/bad.yaml:3:21: rules[0] (x).condition_text: " in sections["norma-rulebooks"]
    assert "valid    rulebooks/good.yaml" in sections["norma-rulebooks"]


@pytest.mark.parametrize(
    ("hook", "good", "bad"),
    [
        ("norma-audit", "outputs.jsonl", "agent/outputs-bad.jsonl"),
        ("norma-rubrics", "rubrics/good.json", "rubrics/bad.json"),
        ("norma-rulebooks", "rulebooks/good.yaml", "rulebooks/bad.yaml"),
    ],
)
def test_each_hook_passes_good_files_and_fails_bad_ones(
    project: Path, pre_commit_home: Path, hooks_repo: Path, hook: str, good: str, bad: str
) -> None:
    config = _hooks_config(hooks_repo, {"id": hook})
    passed = _run_config(project, pre_commit_home, config, "--files", good)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
    failed = _run_config(project, pre_commit_home, config, "--files", good, bad)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Failed" in failed.stdout


def test_without_documents_the_audit_says_what_it_could_not_check(
    project: Path, pre_commit_home: Path, hooks_repo: Path
) -> None:
    result = _run_config(project, pre_commit_home, _hooks_config(hooks_repo, {"id": "norma-audit"}), "--all-files")
    assert result.returncode == 1
    assert "IR.0.03 not evaluated" in result.stdout


def test_the_documented_config_runs(project: Path, pre_commit_home: Path, hooks_repo: Path) -> None:
    """docs/ci.md's config block, pointed at the snapshot: the audit gets the documents through its args."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    block = re.search(r"# \.pre-commit-config\.yaml\n(.*?)```", text, flags=re.DOTALL)
    assert block is not None
    config = yaml.safe_load(block.group(1))
    (entry,) = config["repos"]
    assert {hook["id"] for hook in entry["hooks"]} == {"norma-audit", "norma-rubrics", "norma-rulebooks"}
    entry.update(repo=str(hooks_repo), rev=_rev(hooks_repo))
    result = _run_config(project, pre_commit_home, config, "--all-files")
    assert result.returncode == 1
    assert "FAIL  agent/outputs-bad.jsonl:2" in result.stdout
    assert "IR.0.03 not evaluated" not in result.stdout  # references resolved against the documents of --docs
    assert "rubrics/bad.json" in result.stdout
    assert "rules[0] (x).condition_text" in result.stdout


# -- norma-rules-diff: what a staged change of a rulebook does to the kept turns ---------------------------------------

WARNS = "terms: [never share, do not share, don't share]"
"""The starter rulebook's check that an answer to a password warns never to share it (turn 2 says "never share")."""
STRICTER = "terms: [never share your code]"
"""A stricter version: turn 2 (``password``) no longer passes it."""


@pytest.fixture
def diff_project(tmp_path: Path, hooks_repo: Path) -> tuple[Path, dict[str, str]]:
    """A repository keeping the starter rulebook and turns, committed, with the hook installed (``pre-commit
    install``) running the norma of this environment; and the environment its commands run in."""
    root = tmp_path / "project"
    (root / "rulebooks").mkdir(parents=True)
    (root / "turns").mkdir()
    shutil.copy(EXAMPLES / "starter" / "rules.yaml", root / "rulebooks" / "support.yaml")
    shutil.copy(EXAMPLES / "starter" / "turns.jsonl", root / "turns" / "support.jsonl")
    hook = {"id": "norma-rules-diff", "args": ["--turns", "turns/support.jsonl"]}
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(_hooks_config(hooks_repo, hook)), encoding="utf-8")
    _commit_all(root)
    env = {**os.environ, **_GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "home"), "PRE_COMMIT_COLOR": "never"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # language system: the norma on PATH
    env.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, env=env, check=True, capture_output=True)
    return root, env


def _run(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.model
def test_a_commit_whose_rulebook_change_newly_fails_a_turn_is_refused(
    diff_project: tuple[Path, dict[str, str]],
) -> None:
    """The staged rulebook is compared, not the working tree's: an unstaged change back is left out (and kept)."""
    project, env = diff_project
    rules = project / "rulebooks" / "support.yaml"
    original = rules.read_text(encoding="utf-8")
    assert original.count(WARNS) == 1
    rules.write_text(original.replace(WARNS, STRICTER), encoding="utf-8")
    _git(project, "add", "rulebooks/support.yaml")
    rules.write_text(original, encoding="utf-8")  # unstaged: the working tree back as it was
    head = _rev(project)
    commit = _run(project, env, "git", "commit", "-m", "a stricter check")
    out = commit.stdout + commit.stderr
    assert commit.returncode == 1, out
    assert _rev(project) == head  # refused
    assert "norma rules diff (staged against HEAD)" in out
    assert "Failed" in out
    assert "OLD: HEAD:rulebooks/support.yaml (tenant my-assistant, 3 rules)" in out
    assert "1 of 3 turns change verdict: 1 newly fail, 0 newly pass; 2 unchanged." in out
    assert "turns/support.jsonl:2 (password)" in out
    assert "pass -> fail" in out
    assert rules.read_text(encoding="utf-8") == original  # pre-commit put the unstaged change back


@pytest.mark.model
def test_a_change_that_fails_no_new_turn_and_a_new_rulebook_pass(diff_project: tuple[Path, dict[str, str]]) -> None:
    project, env = diff_project
    rules = project / "rulebooks" / "support.yaml"
    text = rules.read_text(encoding="utf-8")
    description = "description: A starter rulebook for a support assistant"
    assert text.count(description) == 1
    rules.write_text(text.replace(description, "description: Our support assistant's rulebook"), encoding="utf-8")
    shutil.copy(rules, project / "rulebooks" / "billing.yaml")
    _git(project, "add", "-A")
    run = _run(project, env, sys.executable, "-m", "pre_commit", "run", "--verbose")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 of 3 turns change verdict: 0 newly fail, 0 newly pass; 3 unchanged." in run.stdout
    assert "no rule edits" in run.stdout
    assert (
        "norma: rulebooks/billing.yaml is new: HEAD does not have it, there is nothing to compare it with "
        "(check the turns against it with norma check --rules rulebooks/billing.yaml --batch turns/support.jsonl)"
    ) in run.stdout
    commit = _run(project, env, "git", "commit", "-q", "-m", "reworded, and a second rulebook")
    assert commit.returncode == 0, commit.stdout + commit.stderr
