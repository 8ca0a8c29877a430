"""No link of the documentation leaves the repository: a reader of a checkout (or of the repository's web page)
can follow every one. Documents kept elsewhere are named in plain text instead (issue 40)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")


def _relative_links(document: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.DOTALL)  # code is not a link
    return [target for target in _LINK.findall(text) if not _SCHEME.match(target) and not target.startswith("#")]


def _broken(document: Path, repo: Path = REPO) -> list[str]:
    root = repo.resolve()
    broken = []
    for target in _relative_links(document):
        path = (document.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(root) or not path.exists():
            broken.append(target)
    return broken


def test_the_check_sees_a_link_that_leaves_the_repository(tmp_path: Path) -> None:
    page = REPO / "docs" / "matching.md"
    assert "design/040-matching.md" in _relative_links(page)
    docs = tmp_path / "repo" / "docs"
    docs.mkdir(parents=True)
    (docs / "matching.md").write_text("# Matching\n", encoding="utf-8")
    probe = docs / "probe.md"
    probe.write_text(
        "[spec](../../shared/spec/adr-002-rule-matching.md) [ok](matching.md#the-gate) [gone](missing.md)\n"
        "```\n[in code](../../x.md)\n```\n",
        encoding="utf-8",
    )
    assert _broken(probe, tmp_path / "repo") == ["../../shared/spec/adr-002-rule-matching.md", "missing.md"]


def test_no_documentation_link_leaves_the_repository() -> None:
    documents = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    broken = {str(doc.relative_to(REPO)): links for doc in documents if (links := _broken(doc))}
    assert broken == {}
