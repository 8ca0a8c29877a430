"""``norma docs`` (the documentation in the terminal) and ``norma init`` (the starter project), from a checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, REPO, CliResult

STARTER = {
    ".github/workflows/norma.yml",
    ".pre-commit-config.yaml",
    "README.md",
    "rubric.json",
    "rules.yaml",
    "turns.jsonl",
}


def test_docs_lists_every_page(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("docs", "--format", "json")
    assert result.code == 0, result.err
    listing = {entry["topic"]: entry for entry in json.loads(result.out)}
    assert set(listing) >= {"check", "ci", "store", "pytest", "mcp", "traces", "design/060-audit"}
    assert {name for name in listing if "/" not in name} == {path.stem for path in (REPO / "docs").glob("*.md")}
    assert listing["ci"]["title"] == "norma in CI"


@pytest.mark.parametrize("topic", ["store", "store.md", "docs/store.md"])
def test_docs_shows_a_page_as_json(run_cli: Callable[..., CliResult], topic: str) -> None:
    result = run_cli("docs", topic, "--format", "json")
    assert result.code == 0, result.err
    page = json.loads(result.out)
    assert page["topic"] == "store"
    assert Path(page["path"]) == REPO / "docs" / "store.md"
    assert page["text"] == (REPO / "docs" / "store.md").read_text(encoding="utf-8")


def test_docs_outside_a_terminal_is_the_markdown_text() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "norma", "docs", "ci"], capture_output=True, text=True, env=env, check=False, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (REPO / "docs" / "ci.md").read_text(encoding="utf-8")


def test_an_unknown_topic_exits_2_with_the_closest(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("docs", "chek")
    assert result.code == 2
    assert result.err == (
        "norma: error: no documentation page 'chek' (did you mean `norma docs check`? `norma docs` lists them)\n"
    )


def test_no_message_of_norma_names_a_docs_file() -> None:
    """Every message that names a page names the command that shows it (the wheel has no docs/ folder)."""
    import ast

    found = []
    for path in sorted((REPO / "src" / "norma").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        documentation = set()
        for node in ast.walk(tree):
            for child in getattr(node, "body", []) if isinstance(getattr(node, "body", None), list) else []:
                if isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant):
                    documentation.add(id(child.value))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in documentation
                and ("docs/" in node.value and ".md" in node.value)
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_init_copies_the_starter_and_it_passes(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    folder = tmp_path / "project"
    result = run_cli("init", str(folder), "--format", "json")
    assert result.code == 0, result.err
    written = json.loads(result.out)
    assert set(written["files"]) == STARTER
    assert written["overwritten"] == []
    for name in STARTER:
        assert (folder / name).read_bytes() == (EXAMPLES / "starter" / name).read_bytes()
    workflow = yaml.safe_load((folder / ".github" / "workflows" / "norma.yml").read_text(encoding="utf-8"))
    uses = [step for step in workflow["jobs"]["check"]["steps"] if step.get("uses", "").startswith("norma-engineers/")]
    assert uses[0]["with"] == {"command": "check", "files": "turns.jsonl", "rules": "rules.yaml"}
    hooks = yaml.safe_load((folder / ".pre-commit-config.yaml").read_text(encoding="utf-8"))["repos"][0]["hooks"]
    assert {hook["id"] for hook in hooks} == {"norma-rulebooks", "norma-rubrics", "norma-check"}


@pytest.mark.model
def test_the_starter_turns_pass_in_their_folder(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    assert run_cli("init", str(tmp_path)).code == 0
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = run_cli("check", "--rules", "rules.yaml", "--batch", "turns.jsonl", "--format", "json")
    finally:
        os.chdir(here)
    assert result.code == 0, result.err
    document = json.loads(result.out)
    assert (document["turns"], document["passed"]) == (3, 3)


def test_init_never_overwrites_without_force(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text("mine\n", encoding="utf-8")
    refused = run_cli("init", str(tmp_path))
    assert refused.code == 2
    assert refused.err == (
        f"norma: error: {tmp_path}: rules.yaml already there; nothing written (pass --force to overwrite them, or "
        "give another FOLDER)\n"
    )
    assert (tmp_path / "rules.yaml").read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "turns.jsonl").exists()
    forced = run_cli("init", str(tmp_path), "--force", "--format", "json")
    assert forced.code == 0, forced.err
    assert json.loads(forced.out)["overwritten"] == ["rules.yaml"]
    assert (tmp_path / "rules.yaml").read_bytes() == (EXAMPLES / "starter" / "rules.yaml").read_bytes()


def test_the_demo_names_init_and_docs_first(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("demo")
    assert result.code == 0, result.err
    first = result.out.splitlines()[0]
    assert "`norma init`" in first
    assert "`norma docs`" in first
