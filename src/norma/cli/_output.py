"""Output helpers shared by every command: one ``--format`` option, one way to print results."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import click
from rich.console import Console

__all__ = ["FORMATS", "OutputFormat", "console", "emit", "format_option", "resolve_format"]

OutputFormat = Literal["table", "json"]
FORMATS: tuple[OutputFormat, ...] = ("table", "json")

F = TypeVar("F", bound=Callable[..., Any])


def console() -> Console:
    """The console human output goes to (stdout; no colours when it is not a terminal)."""
    return Console(highlight=False, soft_wrap=True)


def format_option(func: F) -> F:
    """Add ``--format table|json`` to a command; without it the root option (default ``table``) applies."""
    option = click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default=None,
        help="Output format: a human table (default) or JSON.",
    )
    return option(func)


def resolve_format(ctx: click.Context, local: str | None) -> OutputFormat:
    """The format in force: the command's own ``--format``, else the root one, else ``table``."""
    if local is not None:
        return "json" if local == "json" else "table"
    root = ctx.find_root()
    chosen = (root.obj or {}).get("format", "table")
    return "json" if chosen == "json" else "table"


def emit(fmt: OutputFormat, payload: Any, table: Callable[[Console], None]) -> None:
    """Print ``payload`` as JSON, or call ``table`` to render it for people."""
    if fmt == "json":
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        table(console())
