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

    Every file is checked and every problem listed (FILE: rules[i] (id).field: message). Exit 0 when every file is
    valid, 1 when one is not, 2 when a file cannot be read or parsed.
    """
    from norma.rules import RulebookError, load_rulebook

    fmt = resolve_format(ctx, output_format)
    checked: list[dict[str, Any]] = []
    for file in files:
        try:
            book = load_rulebook(file)
        except RulebookError as exc:
            problems = [p.model_dump() | {"text": str(p)} for p in exc.problems]
            checked.append({"file": str(file), "valid": False, "tenant": None, "rules": 0, "problems": problems})
            continue
        checked.append({"file": str(file), "valid": True, "tenant": book.tenant_id, "rules": len(book.rules)})
    valid = all(entry["valid"] for entry in checked)

    def table(con: Console) -> None:
        for entry in checked:
            if entry["valid"]:
                con.print(f"valid    {entry['file']} ({entry['rules']} rules, tenant {entry['tenant']})")
                continue
            con.print(f"INVALID  {entry['file']}: {len(entry['problems'])} problem(s)")
            for problem in entry["problems"]:
                con.print(f"      {entry['file']}: {problem['text']}", markup=False)

    emit(fmt, {"valid": valid, "files": checked}, table)
    return 0 if valid else 1
