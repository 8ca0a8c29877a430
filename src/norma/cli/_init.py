"""``norma init [FOLDER]``: copy the starter project norma ships into a folder (the current one by default).

The starter (``examples/starter``, in the wheel ``norma/_examples/starter``) works as copied: a rulebook with
checks, turns that pass them (``norma check --rules rules.yaml --batch turns.jsonl`` exits 0), a rubric, a
pre-commit config running the installed ``norma`` and a GitHub workflow using norma's action. Existing files are
never overwritten without ``--force``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click
from rich.console import Console

from norma._package_data import examples_folder
from norma.cli._output import emit, format_option, resolve_format

__all__ = ["STARTER_COMMAND", "init", "starter_files"]

STARTER_COMMAND = "norma check --rules rules.yaml --batch turns.jsonl"
"""What to run in the folder once the starter is there."""


def starter_files() -> dict[str, Path]:
    """The starter project's files by their path relative to the project (``.github/workflows/norma.yml``...)."""
    root = examples_folder() / "starter"
    return {
        path.relative_to(root).as_posix(): path
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@click.command()
@click.argument("folder", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files of the starter that are already in FOLDER.")
@format_option
@click.pass_context
def init(ctx: click.Context, folder: Path, force: bool, output_format: str | None) -> int:
    """Copy a starter project into FOLDER (default: here): a rulebook, turns, a rubric, a CI workflow, pre-commit.

    It works as copied: `norma check --rules rules.yaml --batch turns.jsonl` in FOLDER passes. Files already there
    are left alone and the command exits 2, unless --force. --format json lists the files written.
    """
    from norma.errors import InvalidInputError

    fmt = resolve_format(ctx, output_format)
    files = starter_files()
    existing = [name for name in files if (folder / name).exists()]
    if existing and not force:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise InvalidInputError(
            f"{existing[0]}{more} already there; nothing written",
            source=str(folder),
            hint="pass --force to overwrite them, or give another FOLDER",
        )
    for name, source in files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    result = {"folder": str(folder), "files": list(files), "overwritten": existing, "next": STARTER_COMMAND}

    def table(con: Console) -> None:
        con.print(f"wrote {len(files)} files to {folder}" + (f" ({len(existing)} overwritten)" if existing else ""))
        for name in files:
            con.print(f"  {name}")
        where = "" if folder == Path(".") else f"cd {folder} && "
        con.print(f"next: {where}{STARTER_COMMAND}   (`norma docs` lists the documentation)")

    emit(fmt, result, table)
    return 0
