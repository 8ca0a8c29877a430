"""``norma docs`` (the documentation in the terminal) and ``norma init`` (the starter project), from a checkout."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from norma.cli._docs import topics
from norma.cli._docs_render import render_page
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


def _docs_piped(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "norma", "docs", *args]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_docs_outside_a_terminal_is_the_markdown_text_its_links_as_commands() -> None:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "[check.md](check.md)" in text
    shown = _docs_piped("ci")
    assert shown == render_page(text, "ci", {name: path.read_text(encoding="utf-8") for name, path in topics().items()})
    assert "`norma docs check`" in shown
    assert "](" not in re.sub(r"```.*?```", "", shown, flags=re.DOTALL)  # no link left for a reader to follow
    assert "docs-test:" not in shown


def test_docs_without_a_topic_is_the_overview_naming_every_page() -> None:
    overview = (REPO / "docs" / "overview.md").read_text(encoding="utf-8")
    assert _docs_piped().startswith("# norma's documentation\n")
    named = set(re.findall(r"^\| `norma docs ([\w/-]+)` \|", overview, flags=re.MULTILINE))
    assert named == set(topics())


@pytest.mark.parametrize("topic", ["names", "overview"])
def test_the_names_and_overview_pages_are_there(run_cli: Callable[..., CliResult], topic: str) -> None:
    result = run_cli("docs", topic, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["text"].startswith("# ")


def test_no_page_sends_its_reader_to_a_file_the_package_lacks() -> None:
    """Rendered, no page has a link left, and a page naming repository files says where they are."""
    pages = {name: path.read_text(encoding="utf-8") for name, path in topics().items()}
    for name, text in pages.items():
        shown = render_page(text, name, pages)
        prose = re.sub(r"```.*?```", "", shown, flags=re.DOTALL)
        assert not re.search(r"\]\([^)\s]+\)", prose), name
        if re.search(r"(?<![\w/.~-])(tests|benchmarks)/\w", prose):
            assert "are in norma's repository (https://github.com/norma-engineers/norma)" in shown, name


PAGES = {
    "guard": "# Guard\n\n## The guarded endpoint\n",
    "design/040-matching": "# 040\n\n## One calibrated confidence\n",
}


@pytest.mark.parametrize(
    ("link", "shown"),
    [
        ("[the guard](guard.md)", "the guard (norma docs guard)"),
        ("[docs/guard.md](guard.md)", "`norma docs guard`"),
        ("[x](guard.md#the-guarded-endpoint)", 'x (norma docs guard, section "The guarded endpoint")'),
        ("[x](guard.md#gone)", "x (norma docs guard)"),
        ("[why](design/040-matching.md#one-calibrated-confidence)",
         'why (norma docs design/040-matching, section "One calibrated confidence")'),
        ("[The page](#the-page)", "The page (a section of this page)"),
        ("[above](#the-page)", 'above (section "The page")'),
        ("[MCP](https://modelcontextprotocol.io)", "MCP (https://modelcontextprotocol.io)"),
        ("[pip install](../README.md#pip-install)", "pip install (in norma's repository: README.md#pip-install)"),
        ("[a test](../tests/test_cli.py)", "a test (in norma's repository: tests/test_cli.py)"),
        ("[`banking`](../examples/rulebooks/banking-support.yaml)",
         "`banking` (examples/rulebooks/banking-support.yaml, which norma init --examples writes)"),
        ("see docs/guard.md", "see `norma docs guard`"),
        ("`design/040-matching.md`", "`norma docs design/040-matching`"),
        ("`[not](a.md)` and DNS.md", "`[not](a.md)` and DNS.md"),
    ],
)  # fmt: skip
def test_a_link_is_shown_as_what_an_installed_norma_can_follow(link: str, shown: str) -> None:
    page = f"# The page\n\nText {link}.\n\n```text\n[kept](guard.md)\n```\n"
    rendered = render_page(page, "check", PAGES)
    assert rendered == f"# The page\n\nText {shown}.\n\n```text\n[kept](guard.md)\n```\n"


def test_a_design_note_links_up_and_across() -> None:
    page = "# 012\n\n[the figures](../guard.md) and [the other note](040-matching.md#one-calibrated-confidence)\n"
    assert render_page(page, "design/012-names-generator", PAGES) == (
        '# 012\n\nthe figures (norma docs guard) and the other note (norma docs design/040-matching, section "One '
        'calibrated confidence")\n'
    )


def test_the_test_comments_are_not_shown_and_repository_files_are_said_to_be_elsewhere() -> None:
    page = (
        "# A page\n\nSee `tests/test_cli.py`.\n\n<!-- docs-test: skip: needs a server -->\n```bash\nnorma serve\n```\n"
    )
    assert render_page(page, "a", {}) == (
        "# A page\n\n> The files under `tests/` this page names are in norma's repository "
        "(https://github.com/norma-engineers/norma), not in the installed package.\n\nSee `tests/test_cli.py`.\n\n"
        "```bash\nnorma serve\n```\n"
    )


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
    assert {hook["id"] for hook in hooks} == {"norma-rulebooks", "norma-rubrics", "norma-check", "norma-rules-diff"}
    (diff,) = [
        step for step in workflow["jobs"]["diff"]["steps"] if step.get("uses", "").startswith("norma-engineers/")
    ]
    assert diff["with"] == {"command": "diff", "files": "turns.jsonl", "rules": "rules.yaml"}
    assert workflow["jobs"]["diff"]["if"] == "github.event_name == 'pull_request'"


@pytest.mark.model
def test_the_starter_diff_job_shows_what_a_pull_request_does(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    """The starter's diff step, run as the runner runs the action (tests/test_action.py), on a pull request of the
    starter that makes a check stricter: the turn it breaks is in the summary, and the step fails."""
    from tests.test_action import STRICTER, WARNS, _git, _run_action

    folder = tmp_path / "project"
    assert run_cli("init", str(folder)).code == 0
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "add", "-A")
    _git(folder, "commit", "-q", "-m", "norma init")
    base = _git(folder, "rev-parse", "HEAD")
    rules = folder / "rules.yaml"
    rules.write_text(rules.read_text(encoding="utf-8").replace(WARNS, STRICTER), encoding="utf-8")
    _git(folder, "commit", "-q", "-am", "a stricter check")
    workflow = yaml.safe_load((folder / ".github" / "workflows" / "norma.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in workflow["jobs"]["diff"]["steps"] if str(s.get("uses", "")).startswith("norma-engineers/")]
    github = {"event.pull_request.base.sha": base}
    run = _run_action(folder, tmp_path, github=github, install="false", **{k: str(v) for k, v in step["with"].items()})
    assert run.code == 1, run.stdout
    assert "**1 of 3 turns change verdict: 1 newly fail, 0 newly pass; 2 unchanged.**" in run.summary
    assert "| turns.jsonl:2 (password) | pass → **fail** |" in run.summary


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


def _tracked_examples() -> set[str]:
    listed = subprocess.run(["git", "ls-files", "examples"], cwd=REPO, capture_output=True, text=True, check=True)
    return set(listed.stdout.split())


def test_init_examples_writes_the_examples_where_the_docs_look(
    run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """`norma init --examples` lays the shipped examples out as the repository's examples/ folder: a page's
    `examples/rulebooks/banking-support.yaml` is there, byte for byte."""
    result = run_cli("init", "--examples", str(tmp_path), "--format", "json")
    assert result.code == 0, result.err
    written = json.loads(result.out)
    examples = {name for name in written["files"] if name.startswith("examples/")}
    assert set(written["files"]) == STARTER | examples
    assert examples == _tracked_examples()
    for name in examples:
        assert (tmp_path / name).read_bytes() == (REPO / name).read_bytes(), name
    assert (tmp_path / "examples" / "rulebooks" / "banking-support.yaml").is_file()


def test_init_examples_says_what_it_wrote(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    result = run_cli("init", "--examples", str(tmp_path))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == f"wrote {len(STARTER) + len(_tracked_examples())} files to {tmp_path}"
    assert lines[-2].startswith(f"  examples/ ({len(_tracked_examples())} files: audit, embeddings, matching, names, ")


def test_init_examples_never_overwrites_an_example_without_force(
    run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    mine = tmp_path / "examples" / "rulebooks" / "banking-support.yaml"
    mine.parent.mkdir(parents=True)
    mine.write_text("mine\n", encoding="utf-8")
    refused = run_cli("init", "--examples", str(tmp_path))
    assert refused.code == 2
    assert refused.err == (
        f"norma: error: {tmp_path}: examples/rulebooks/banking-support.yaml already there; nothing written (pass "
        "--force to overwrite them, or give another FOLDER)\n"
    )
    assert sorted(path.name for path in tmp_path.rglob("*") if path.is_file()) == ["banking-support.yaml"]
    assert run_cli("init", str(tmp_path)).code == 0  # without --examples, the examples are none of its business
    forced = run_cli("init", "--examples", str(tmp_path), "--force", "--format", "json")
    assert forced.code == 0, forced.err
    written = json.loads(forced.out)
    assert written["overwritten"] == ["examples/rulebooks/banking-support.yaml"]
    assert set(written["unchanged"]) == STARTER  # as `norma init` wrote them: not written again
    assert mine.read_bytes() == (EXAMPLES / "rulebooks" / "banking-support.yaml").read_bytes()


def test_init_then_init_examples_adds_the_examples(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    assert run_cli("init", str(tmp_path)).code == 0
    again = run_cli("init", "--examples", str(tmp_path), "--format", "json")
    assert again.code == 0, again.err
    written = json.loads(again.out)
    assert set(written["unchanged"]) == STARTER
    assert set(written["files"]) == _tracked_examples()
    assert written["overwritten"] == []
    shown = run_cli("init", str(tmp_path))  # a third time: nothing to write, nothing refused
    assert shown.code == 0, shown.err
    assert shown.out.splitlines()[0] == f"wrote 0 files to {tmp_path}, {len(STARTER)} already there as written"


def test_init_into_a_file_where_a_folder_goes_is_one_line(run_cli: Callable[..., CliResult], tmp_path: Path) -> None:
    (tmp_path / "examples").write_text("a file\n", encoding="utf-8")
    result = run_cli("init", "--examples", str(tmp_path))
    assert result.code == 2
    assert result.err.count("\n") == 1
    assert result.err.startswith(
        f"norma: error: {tmp_path / 'examples' / 'README.md'}: cannot write examples/README.md"
    )
