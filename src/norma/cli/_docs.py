"""``norma docs [TOPIC]``: the documentation norma ships, in the terminal (no checkout, no browser needed).

The pages are the repository's ``docs/*.md`` (and ``docs/design/*.md`` as ``design/NAME``), carried by the wheel
(:func:`norma._package_data.docs_folder`). Without a topic, the overview (``docs/overview.md``: what norma is and
one line per page); with one, the page: rendered in a terminal, the Markdown text otherwise (a pipe, a file), its
links turned into the commands that show their pages (:mod:`norma.cli._docs_render`). ``--format json`` gives
``{topic, path, text}`` with the page's text as written (or, without a topic, the list of pages).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markdown import Markdown

from norma._package_data import docs_folder
from norma.cli._output import emit, format_option, resolve_format

__all__ = ["OVERVIEW", "docs", "topics"]

OVERVIEW = "overview"
"""The page ``norma docs`` shows without a topic."""


def topics() -> dict[str, Path]:
    """Every page by topic: ``check`` for ``docs/check.md``, ``design/060-audit`` for ``docs/design/060-audit.md``."""
    folder = docs_folder()
    pages = {path.stem: path for path in sorted(folder.glob("*.md"))}
    pages.update({f"design/{path.stem}": path for path in sorted((folder / "design").glob("*.md"))})
    return pages


def _title(path: Path) -> str:
    """The page's first ``# `` heading, else its topic."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def _unknown(topic: str, known: list[str]) -> Exception:
    import difflib

    from norma.errors import InvalidInputError

    close = difflib.get_close_matches(topic.removesuffix(".md").removeprefix("docs/"), known, n=1, cutoff=0.5)
    hint = f"did you mean `norma docs {close[0]}`? " if close else ""
    return InvalidInputError(f"no documentation page {topic!r}", hint=f"{hint}`norma docs` lists them")


@click.command()
@click.argument("topic", required=False)
@format_option
@click.pass_context
def docs(ctx: click.Context, topic: str | None, output_format: str | None) -> int:
    """Show a page of norma's documentation in the terminal; without TOPIC, list the pages.

    Without TOPIC it shows the overview: what norma is and one line per page with the command that opens it. In a
    terminal a page is rendered; piped or redirected it is the Markdown text. Either way its links name the command
    that shows the page they point to (`norma docs guard`). --format json gives {topic, path, text} (the text as
    written), or without TOPIC the list of pages.
    """
    fmt = resolve_format(ctx, output_format)
    pages = topics()
    if topic is None and fmt == "json":
        listing = [{"topic": name, "title": _title(path), "path": str(path)} for name, path in pages.items()]
        emit(fmt, listing, lambda con: None)
        return 0
    name = OVERVIEW if topic is None else topic.removeprefix("docs/").removesuffix(".md")
    path = pages.get(name)
    if path is None:
        raise _unknown(topic or name, list(pages))
    text = path.read_text(encoding="utf-8")

    def page(con: Console) -> None:
        from norma.cli._docs_render import render_page

        shown = render_page(text, name, {other: _read(where) for other, where in pages.items()})
        if sys.stdout.isatty():  # wrapped to the terminal (the CLI's console does not wrap: it would crop)
            Console(highlight=False).print(Markdown(shown, hyperlinks=False))
        else:
            sys.stdout.write(shown)

    emit(fmt, {"topic": name, "path": str(path), "text": text}, page)
    return 0


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")
