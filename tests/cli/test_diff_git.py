"""``norma rules diff-git``: a rulebook compared with its version at a git commit, in a real git repository. What
the diff finds is tested with the pre-commit hook (tests/test_precommit_hooks.py) and the action (tests/test_action.py);
here, what the command decides before it compares anything: the repository, the commit, the rulebooks it skips."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "norma tests",
    "GIT_AUTHOR_EMAIL": "tests@norma.invalid",
    "GIT_COMMITTER_NAME": "norma tests",
    "GIT_COMMITTER_EMAIL": "tests@norma.invalid",
}


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env={**os.environ, **_GIT_ENV})


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository (the current folder) keeping the starter rulebook and turns in one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("rules.yaml", "turns.jsonl"):
        shutil.copy(EXAMPLES / "starter" / name, root / name)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "starter")
    monkeypatch.chdir(root)
    return root


def test_a_rulebook_as_committed_is_not_compared(run_cli: Run, repo: Path) -> None:
    result = run_cli("rules", "diff-git", "rules.yaml", "--turns", "turns.jsonl", "--report", "table=diff.txt")
    assert (result.code, result.out) == (0, "")
    said = "rules.yaml is the same as at HEAD: no rule changed (nothing to compare)"
    assert result.err == f"norma: {said}\n"
    assert (repo / "diff.txt").read_text(encoding="utf-8") == f"{said}\n"


def test_a_rulebook_the_commit_lacks_is_new(run_cli: Run, repo: Path) -> None:
    (repo / "rulebooks").mkdir()
    shutil.copy(repo / "rules.yaml", repo / "rulebooks" / "billing.yaml")
    result = run_cli("rules", "diff-git", "rulebooks/billing.yaml", "--turns", "turns.jsonl", "--format", "markdown")
    assert result.code == 0, result.err
    assert result.out == (
        "## norma rules diff\n\n`rulebooks/billing.yaml` is new: `HEAD` does not have it, there is nothing to compare "
        "it with (check the turns against it with `norma check --rules rulebooks/billing.yaml --batch turns.jsonl`).\n"
    )


def test_in_a_repository_without_a_commit_every_rulebook_is_new(run_cli: Run, tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    shutil.copy(EXAMPLES / "starter" / "rules.yaml", root / "rules.yaml")
    shutil.copy(EXAMPLES / "starter" / "turns.jsonl", root / "turns.jsonl")
    here = Path.cwd()
    os.chdir(root)
    try:
        result = run_cli("rules", "diff-git", "rules.yaml", "--turns", "turns.jsonl")
    finally:
        os.chdir(here)
    assert result.code == 0, result.err
    assert result.err.startswith("norma: rules.yaml is new: HEAD does not have it")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--against", "v9"],
            "norma: error: --against: no commit 'v9' in the git repository at {repo} (fetch it first (git fetch "
            "origin REF; in GitHub Actions, actions/checkout with fetch-depth: 0))",
        ),
        (
            ["--against", "--help"],
            "norma: error: --against: '--help' is not a git commit (give a branch, tag or SHA)",
        ),
        (
            ["--format", "json", "rules.yaml"],
            "norma: error: --format json takes one RULEBOOK, not 2: run the command once per rulebook",
        ),
        (
            ["--report", "sarif=x.sarif"],
            "norma: error: Invalid value for '--report': 'sarif=x.sarif' is not FORMAT=FILE with FORMAT one of table, "
            "json, markdown, junit (e.g. --report junit=diff.xml)",
        ),
        (["../outside.yaml"], "norma: error: ../outside.yaml: the rulebook is outside the git repository at {repo}"),
    ],
)
def test_what_cannot_be_compared_exits_2_saying_why(run_cli: Run, repo: Path, args: list[str], says: str) -> None:
    (repo.parent / "outside.yaml").write_text("rules: []\n", encoding="utf-8")
    result = run_cli("rules", "diff-git", "rules.yaml", "--turns", "turns.jsonl", *args)
    assert result.code == 2, result.out
    assert result.err.startswith(says.format(repo=repo.resolve())), result.err


def test_outside_a_git_repository_exits_2(run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(EXAMPLES / "starter" / "rules.yaml", tmp_path / "rules.yaml")
    shutil.copy(EXAMPLES / "starter" / "turns.jsonl", tmp_path / "turns.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # no repository above it either
    result = run_cli("rules", "diff-git", "rules.yaml", "--turns", "turns.jsonl")
    assert result.code == 2
    assert result.err.startswith(f"norma: error: {tmp_path}: {tmp_path} is not in a git repository: fatal: "), (
        result.err
    )
    assert "(run norma rules diff-git in the repository's checkout (norma rules diff compares two files))" in result.err
