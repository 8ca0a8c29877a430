"""``norma docs [TOPIC]``: the documentation norma ships, in the terminal (no checkout, no browser needed).

The pages are the repository's ``docs/*.md`` (and ``docs/design/*.md`` as ``design/NAME``), carried by the wheel
(:func:`norma._package_data.docs_folder`). Without a topic, the list of pages; with one, the page: rendered in a
terminal, the Markdown text as it is otherwise (a pipe, a file); ``--format json`` gives ``{topic, path, text}``
(or the list).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from norma._package_data import docs_folder
from norma.cli._output import emit, format_option, print_table, resolve_format

__all__ = ["docs", "topics"]


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

    In a terminal the page is rendered; piped or redirected it is the Markdown text. --format json gives
    {topic, path, text}, or the list of pages.
    """
    fmt = resolve_format(ctx, output_format)
    pages = topics()
    if topic is None:
        listing = [{"topic": name, "title": _title(path), "path": str(path)} for name, path in pages.items()]

        def table(con: Console) -> None:
            grid = Table("topic", "title")
            for entry in listing:
                grid.add_row(entry["topic"], entry["title"])
            print_table(con, grid)
            con.print("Show one with `norma docs TOPIC` (e.g. `norma docs check`).")

        emit(fmt, listing, table)
        return 0
    name = topic.removeprefix("docs/").removesuffix(".md")
    path = pages.get(name)
    if path is None:
        raise _unknown(topic, list(pages))
    text = path.read_text(encoding="utf-8")

    def page(con: Console) -> None:
        if sys.stdout.isatty():
            con.print(Markdown(text))
        else:
            sys.stdout.write(text)

    emit(fmt, {"topic": name, "path": str(path), "text": text}, page)
    return 0
