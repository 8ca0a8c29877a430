"""``norma rules validate``: check rulebook files without a store (a thin adapter over ``load_rulebook``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from norma.cli._output import emit, format_option, resolve_format

__all__ = ["validate_command"]


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="FILE...")
@format_option
@click.pass_context
def validate_command(ctx: click.Context, files: tuple[Path, ...], output_format: str | None) -> int:
    """Validate rulebook files (YAML or JSON) as `rules import` would, writing nothing.

    Every file is checked and every problem listed, where it is (FILE:LINE:COL: rules[i] (id).field: message).
    Exit 0 when every file is valid, 2 when one is not or cannot be read or parsed (a bad rulebook exits 2 from
    every command).
    """
    from norma.cli._errors import echo_annotations, echo_errors, error_lines
    from norma.errors import NormaError
    from norma.rules import RulebookError, load_rulebook

    fmt = resolve_format(ctx, output_format)
    checked: list[dict[str, Any]] = []
    located: dict[str, list[str]] = {}
    unreadable: list[NormaError] = []
    for file in files:
        try:
            book = load_rulebook(file)
        except RulebookError as exc:
            lines = error_lines(exc)[1:]
            located[str(file)] = [str(line) for line in lines]
            echo_annotations(lines)
            problems = [p.model_dump() | {"text": str(p)} for p in exc.problems]
            checked.append({"file": str(file), "valid": False, "tenant": None, "rules": 0, "problems": problems})
            continue
        except NormaError as exc:
            if len(files) == 1:
                raise  # one file: the error as every command reports it
            unreadable.append(exc)
            continue
        checked.append({"file": str(file), "valid": True, "tenant": book.tenant_id, "rules": len(book.rules)})
    for error in unreadable:
        echo_errors(error_lines(error))
    valid = not unreadable and all(entry["valid"] for entry in checked)

    def table(con: Console) -> None:
        for entry in checked:
            if entry["valid"]:
                con.print(f"valid    {entry['file']} ({entry['rules']} rules, tenant {entry['tenant']})")
                continue
            con.print(f"INVALID  {entry['file']}: {len(entry['problems'])} problem(s)", markup=False)
            for line in located[entry["file"]]:
                con.print(line, markup=False, soft_wrap=True)

    if checked:
        emit(fmt, {"valid": valid, "files": checked}, table)
    return 0 if valid else 2
