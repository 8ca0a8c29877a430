"""``norma demo``: an end-to-end walk over the examples norma ships through every capability it has."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.rule import Rule

from norma._package_data import examples_folder
from norma._version import __version__
from norma.cli._output import emit, format_option, resolve_format
from norma.errors import MissingDependencyError

__all__ = ["SECTIONS", "Section", "demo", "find_examples"]

Section = Callable[[Path], tuple[dict[str, Any], Callable[[Console], None]]]
"""A demo section: takes the examples folder, returns a JSON summary and a renderer for people."""

SECTIONS: dict[str, Section] = {}
"""Demo sections by capability name, in the order they run; each capability module adds its own."""

SECTION_MODULES = (
    "norma.cli._audit",
    "norma.cli._embeddings",
    "norma.cli._match",
    "norma.cli._check",
    "norma.cli._names",
    "norma.cli._rubrics",
    "norma.cli._rules",
)
"""The command modules that add a section, imported (in this order) when the demo runs, not before."""


def _skipped(reason: str) -> Callable[[Console], None]:
    def render(con: Console) -> None:
        con.print(f"skipped: {reason}", markup=False)

    return render


def find_examples(explicit: Path | None = None) -> Path:
    """The examples folder: the one given, else the one norma ships (:func:`norma._package_data.examples_folder`)."""
    return explicit if explicit is not None else examples_folder()


@click.command()
@click.option(
    "--examples",
    "examples_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The examples folder to walk (default: the ones norma ships).",
)
@format_option
@click.pass_context
def demo(ctx: click.Context, examples_dir: Path | None, output_format: str | None) -> int:
    """Walk the examples through every capability and print what each one does.

    A capability whose dependency is missing (the embedding model, say) is shown as skipped, with how to install
    it; the others still run."""
    fmt = resolve_format(ctx, output_format)
    folder = find_examples(examples_dir)
    for module in SECTION_MODULES:
        importlib.import_module(module)
    results: dict[str, Any] = {"version": __version__, "examples": str(folder), "sections": {}}
    renderers: list[tuple[str, Callable[[Console], None]]] = []
    for name, section in SECTIONS.items():
        try:
            summary, render = section(folder)
        except MissingDependencyError as exc:  # e.g. no embedding model: the sections that need none still run
            summary, render = {"skipped": str(exc)}, _skipped(str(exc))
        results["sections"][name] = summary
        renderers.append((name, render))

    def table(con: Console) -> None:
        con.print(
            f"[bold]norma {__version__}[/bold] demo over {folder} (`norma init` copies a starter project, "
            "`norma docs` shows the documentation)"
        )
        if not renderers:
            con.print("No capability has landed yet.")
        for name, render in renderers:
            con.print(Rule(name))
            render(con)

    emit(fmt, results, table)
    return 0
