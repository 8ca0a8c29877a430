"""A documentation page as ``norma docs`` prints it: the Markdown of ``docs/*.md`` made readable without the
repository.

The pages are written to be read in the repository too (on its web page, in an editor), so their links point at
files: ``[the guard](guard.md)``, ``[why](design/040-matching.md#one-calibrated-confidence)``,
``[README](../README.md#pip-install)``. An installed norma has the pages but not the files around them, so in the
terminal (rendered, or as text in a pipe) each link becomes what a reader there can follow:

* another page: ``the guard (norma docs guard)``, with its section when the link names one
  (``why (norma docs design/040-matching, section "One calibrated confidence")``); a link whose text is the
  page's file name is the command alone;
* a section of the same page: ``text (section "Batch options")``;
* the web: ``text (https://...)``;
* a shipped example: ``text (examples/..., which norma init --examples writes)``;
* any other file of the repository: ``text (in norma's repository: tests/...)``.

A page that names repository files in its text (``tests/...``, ``benchmarks/...``) gets one line under its title
saying where those are. The ``<!-- docs-test: ... -->`` comments (how the test of the documentation's examples
runs a block) are dropped. Code blocks and code spans are left exactly as they are.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

__all__ = ["REPOSITORY", "REPOSITORY_FOLDERS", "heading_slugs", "render_page"]

REPOSITORY = "https://github.com/norma-engineers/norma"
"""norma's repository, where the files the package does not carry are."""

REPOSITORY_FOLDERS = ("tests/", "benchmarks/", "experiments/", "scripts/", "deploy/", "src/")
"""Top folders of the repository that an installed norma does not have (``src/`` is the package, as source)."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINK_OR_CODE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<spanned>.+?)(?P=ticks))"  # a code span: left alone, unless it is a page's file
    r"|(?P<image>!?)\[(?P<text>(?:[^\[\]`]|`[^`]*`)+)\]\((?P<target>[^)\s]+)\)"
    r"|(?<![\w/.-])(?P<page>(?:\.\./)*[\w/-]+\.md(?:#[\w-]+)?)(?![\w/-])",  # a page named in the text
    flags=re.DOTALL,
)
_TEST_COMMENT = re.compile(r"^<!--\s*docs-test:.*?-->[ \t]*\n", flags=re.MULTILINE)
_REPOSITORY_PATH = re.compile(r"(?<![\w/.~-])(" + "|".join(map(re.escape, REPOSITORY_FOLDERS)) + r")[\w.-]")


def heading_slugs(text: str) -> dict[str, str]:
    """The page's section anchors, as a Markdown host makes them (GitHub's rules), to the heading's text."""
    slugs: dict[str, str] = {}
    seen: dict[str, int] = {}
    for block, fenced in _segments(text):
        if fenced:
            continue
        for line in block.splitlines():
            found = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
            if not found:
                continue
            heading = found.group(1)
            slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            slugs[slug if count == 0 else f"{slug}-{count}"] = heading.replace("`", "")
    return slugs


def _segments(text: str) -> list[tuple[str, bool]]:
    """The page cut into runs of prose and fenced code blocks: ``(text, is_fenced)``, in order, lossless."""
    segments: list[tuple[str, bool]] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opening = _FENCE.match(line)
        if fence is None and opening:
            if current:
                segments.append(("".join(current), False))
            current, fence = [line], opening.group(1)
        elif fence is not None and line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
            current.append(line)
            segments.append(("".join(current), True))
            current, fence = [], None
        else:
            current.append(line)
    if current:
        segments.append(("".join(current), fence is not None))
    return segments


def render_page(text: str, topic: str, pages: dict[str, str]) -> str:
    """``text``, the Markdown page ``topic``, as ``norma docs`` prints it (see the module's docstring).

    Args:
        text: the page's Markdown.
        topic: its topic (``check``, ``design/040-matching``).
        pages: every topic to its page's text (for the sections links name).
    """
    folder = PurePosixPath(topic).parent
    pages = {**pages, topic: text}  # its own sections
    out: list[str] = []
    for block, fenced in _segments(_TEST_COMMENT.sub("", text)):
        if fenced:
            out.append(block)
            continue
        out.append(_LINK_OR_CODE.sub(lambda found: _link(found, folder, topic, pages), block))
    rendered = "".join(out)
    folders = _repository_folders(rendered)
    return _with_note(rendered, folders) if folders else rendered


def _link(found: re.Match[str], folder: PurePosixPath, topic: str, pages: dict[str, str]) -> str:
    named = found.group("page") or (found.group("code") and found.group("spanned"))
    if named:  # docs/llm.md, design/040-matching.md: the command, when it names a page; else as written
        if not re.fullmatch(r"[\w/.-]+\.md(#[\w-]+)?", named):
            return found.group(0)
        if named.startswith("docs/"):  # named from the repository's root
            folder, named = PurePosixPath("."), named.removeprefix("docs/")
        where = _target(named, folder, topic, pages)
        return _command(where) if where.startswith("norma docs ") else found.group(0)
    text, target = found.group("text"), found.group("target")
    where = _target(target, folder, topic, pages)
    plain = text.strip("`")
    if where.startswith("norma docs ") and plain.removeprefix("docs/").endswith(".md"):
        return _command(where)  # [docs/audit.md](audit.md) -> `norma docs audit`
    if plain in (target, where):
        return where
    if target.startswith("#") and where.casefold() == f'section "{plain}"'.casefold():
        return f"{text} (a section of this page)"
    return f"{text} ({where})"


def _command(where: str) -> str:
    """``norma docs X, section "Y"`` as a command to type and its section."""
    command, _, section = where.partition(", ")
    return f"`{command}`" + (f", {section}" if section else "")


def _target(target: str, folder: PurePosixPath, topic: str, pages: dict[str, str]) -> str:
    """Where a link's target is, for a reader of an installed norma."""
    if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target):
        return target
    path, _, anchor = target.partition("#")
    if not path:
        return _section(topic, anchor, pages) or f"#{anchor}"
    resolved = _normalise(folder / path)
    if resolved.endswith(".md") and not resolved.startswith("../"):
        name = resolved.removesuffix(".md")
        if name in pages:
            section = _section(name, anchor, pages) if anchor else ""
            return f"norma docs {name}" + (f", {section}" if section else "")
    repository_path = _normalise(PurePosixPath("docs") / folder / path)
    if repository_path.startswith("examples/"):
        return f"{repository_path}, which norma init --examples writes"
    return f"in norma's repository: {repository_path}" + (f"#{anchor}" if anchor else "")


def _section(name: str, anchor: str, pages: dict[str, str]) -> str:
    heading = heading_slugs(pages.get(name, "")).get(anchor)
    return f'section "{heading}"' if heading else ""


def _normalise(path: PurePosixPath) -> str:
    """``path`` with its ``..`` and ``.`` parts resolved (it may climb above its start: ``../README.md``)."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            else:
                parts.append(part)
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _repository_folders(text: str) -> list[str]:
    """The repository-only folders the prose of ``text`` names files in, in :data:`REPOSITORY_FOLDERS`' order."""
    prose = [re.sub(r"in norma's repository: \S+", "", block) for block, fenced in _segments(text) if not fenced]
    named = {found.group(1) for block in prose for found in _REPOSITORY_PATH.finditer(block)}
    return [folder for folder in REPOSITORY_FOLDERS if folder in named]


def _with_note(text: str, folders: list[str]) -> str:
    """``text`` with a line under its title: where the repository files it names are."""
    listed = ", ".join(f"`{folder}`" for folder in folders)
    note = (
        f"> The files under {listed} this page names are in norma's repository ({REPOSITORY}), not in the "
        "installed package.\n"
    )
    title = re.search(r"^# .*\n", text, flags=re.MULTILINE)
    if title is None:
        return note + "\n" + text
    return text[: title.end()] + "\n" + note + text[title.end() :]
