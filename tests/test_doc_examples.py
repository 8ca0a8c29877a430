"""The documentation's examples are all accounted for: every fenced block has a language, every example runs or says
why not, and none needs the repository. tests/test_packaging.py runs them from the wheel in an empty folder; these
are the fast checks of the pages, and of how a page is read into blocks (tests/_doc_examples.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests._doc_examples import (
    RUN,
    SHELL,
    Block,
    console_commands,
    expected_output,
    page_blocks,
    plan,
    problems,
    shown_in,
)
from tests.conftest import REPO

DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
BLOCKS = [block for page in PAGES for block in page_blocks(DOCS, page)]

REPOSITORY_ONLY = re.compile(r"(?<![\w/.-])(?:tests|scripts|benchmarks|experiments|deploy)/|\.venv/|^\s*make ", re.M)
"""What only a checkout of the repository has: its folders, its virtual environment, its Makefile."""


def test_the_pages_are_read() -> None:
    assert len(PAGES) > 25
    assert len(BLOCKS) > 120
    languages = {block.language for block in BLOCKS}
    assert {"python", "console", "bash", "sh", "yaml", "json", "text"} <= languages


def test_every_fenced_block_says_its_language() -> None:
    """A block without one could hide a command: each says whether it is an example (python, a shell) or not."""
    assert [block.where for block in BLOCKS if not block.language] == []


def test_every_docs_test_comment_is_understood() -> None:
    assert {block.where: problem for block in BLOCKS if (problem := block.directive_problem())} == {}


def test_every_example_runs_or_says_why_not() -> None:
    examples = [block for block in BLOCKS if block.language in RUN]
    skipped = [block for block in examples if block.skip_reason is not None]
    assert all(block.skip_reason for block in skipped)
    assert len(examples) - len(skipped) >= 30  # what tests/test_packaging.py runs from the wheel
    for block in examples:
        if block.language == "console" and block.skip_reason is None:
            assert console_commands(block.code), block.where


def test_no_example_that_runs_needs_the_repository() -> None:
    """Outside a checkout the examples have what `norma init --examples` writes, never tests/, scripts/... ."""
    run = [block for block in BLOCKS if block.language in RUN and block.skip_reason is None]
    assert [block.where for block in run if REPOSITORY_ONLY.search(block.code)] == []


def test_the_files_pages_write_are_data_or_code() -> None:
    files = [block for block in BLOCKS if block.file_name is not None]
    assert {block.file_name for block in files} >= {"acme.yaml", "pytest.ini", "test_agent.py"}
    assert all("/" not in (block.file_name or "") for block in files)


# -- how a page is read --------------------------------------------------------------------------------------------


def test_a_page_is_read_into_blocks_with_their_comments(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n"
        "<!-- docs-test: exit 1 -->\n"
        "```console\n$ norma check --rules r.yaml \\\n    -m hi -o hello\nverdict: FAIL\n...\n```\n\n"
        "1. A step:\n\n"
        "   <!-- docs-test: skip: needs a running norma serve -->\n\n"
        "   ```bash\n   norma serve\n     # indented comment\n   ```\n\n"
        "<!-- docs-test: file rules.yaml -->\n```yaml\nrules: []\n```\n\n"
        "```python\nif True:\n    print('x')\n```\n",
        encoding="utf-8",
    )
    console, serve, data, code = page_blocks(tmp_path, page)
    assert (console.line, console.language, console.expected_exit) == (4, "console", 1)
    assert console_commands(console.code) == [
        ("norma check --rules r.yaml \\\n    -m hi -o hello", ["verdict: FAIL", "..."])
    ]
    assert serve.skip_reason == "needs a running norma serve"
    assert serve.code == "norma serve\n  # indented comment\n"
    assert (data.file_name, data.code) == ("rules.yaml", "rules: []\n")
    assert code.code == "if True:\n    print('x')\n"
    assert [step["kind"] for step in plan([console, serve, data, code])] == ["shell", "file", "python"]


def test_a_comment_that_is_not_understood_is_named() -> None:
    assert Block("p.md", 1, "yaml", "", "exit 1").directive_problem() == (
        "an exit status on a block that is not a shell example"
    )
    assert Block("p.md", 1, "bash", "", "skip:").directive_problem() == "a skip without a reason"
    assert Block("p.md", 1, "bash", "", "run twice").directive_problem() == "an unknown docs-test comment: 'run twice'"


def test_shown_output_is_found_in_order_with_ellipses() -> None:
    output = "header\nverdict: FAIL, reward 0.714\n2 failed, 3 passed in 4.91s\n"
    assert (
        shown_in(expected_output(["...", "verdict: FAIL, reward 0.714", "...2 failed, 3 passed in ..."]), output)
        is None
    )
    assert (
        shown_in(["2 failed, 3 passed in ...", "verdict: FAIL, reward 0.714"], output) == "verdict: FAIL, reward 0.714"
    )
    assert shown_in(["verdict: PASS"], output) == "verdict: PASS"


def test_problems_name_the_block_and_what_went_otherwise() -> None:
    failing = Block("check.md", 14, "console", "$ norma check\nverdict: FAIL\n", "exit 1")
    passing = Block("x.md", 3, "bash", "norma rubric schema\n")
    results = [
        {"line": 14, "kind": "shell", "code": "norma check", "exit": 1, "stdout": "verdict: PASS\n", "stderr": ""},
        {"line": 3, "kind": "shell", "code": "norma rubric schema", "exit": 2, "stdout": "", "stderr": "bad\n"},
    ]
    found = problems([failing, passing], results)
    assert found[0].startswith("docs/check.md:14 (norma check): the output has no line 'verdict: FAIL'")
    assert found[1].startswith("docs/x.md:3 (norma rubric schema): exit 2, expected 0\nbad")
    assert problems([passing], []) == ["docs/x.md:3: 0 steps ran, 1 expected"]


@pytest.mark.parametrize("language", SHELL)
def test_a_shell_block_is_one_step_per_script_or_command(language: str) -> None:
    code = "$ norma a\n$ norma b\nout\n" if language == "console" else "norma a\nnorma b\n"
    steps = plan([Block("p.md", 1, language, code)])
    assert [step["code"] for step in steps] == (["norma a", "norma b"] if language == "console" else [code])
