"""``norma init [FOLDER]``: copy the starter project norma ships into a folder (the current one by default).

The starter (``examples/starter``, in the wheel ``norma/_examples/starter``) works as copied: a rulebook with
checks, turns that pass them (``norma check --rules rules.yaml --batch turns.jsonl`` exits 0), a rubric, a
pre-commit config running the installed ``norma`` and a GitHub workflow using norma's action. With ``--examples`` it
also copies every example norma ships into ``FOLDER/examples/``, laid out as the repository's ``examples/`` folder,
so that the documentation's examples (``norma docs``), which name files such as
``examples/rulebooks/banking-support.yaml``, run there as they do in a checkout. Existing files with other contents
are never overwritten without ``--force``; files already as norma writes them are left as they are (so ``norma init``
then ``norma init --examples`` works).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click
from rich.console import Console

from norma._package_data import examples_folder
from norma.cli._output import emit, format_option, resolve_format, unwritable

__all__ = ["EXAMPLES_FOLDER", "STARTER_COMMAND", "example_files", "init", "starter_files"]

STARTER_COMMAND = "norma check --rules rules.yaml --batch turns.jsonl"
"""What to run in the folder once the starter is there."""

EXAMPLES_FOLDER = "examples"
"""Where ``--examples`` puts the shipped examples in FOLDER: the name the documentation's paths start with."""


def _files(root: Path, prefix: str = "") -> dict[str, Path]:
    """The files under ``root`` by their path relative to it (after ``prefix``), compiled Python left out."""
    return {
        prefix + path.relative_to(root).as_posix(): path
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _same(target: Path, source: Path) -> bool:
    """``target`` is a file holding exactly what ``source`` holds."""
    try:
        return target.is_file() and target.read_bytes() == source.read_bytes()
    except OSError:
        return False


def starter_files() -> dict[str, Path]:
    """The starter project's files by their path relative to the project (``.github/workflows/norma.yml``...)."""
    return _files(examples_folder() / "starter")


def example_files() -> dict[str, Path]:
    """Every example norma ships by its path in a project (``examples/rulebooks/banking-support.yaml``...)."""
    return _files(examples_folder(), f"{EXAMPLES_FOLDER}/")


@click.command()
@click.argument("folder", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--examples",
    "with_examples",
    is_flag=True,
    help="Also copy every example norma ships into FOLDER/examples/ (the files the documentation's examples use).",
)
@click.option("--force", is_flag=True, help="Overwrite files of the starter (or examples) already in FOLDER.")
@format_option
@click.pass_context
def init(ctx: click.Context, folder: Path, with_examples: bool, force: bool, output_format: str | None) -> int:
    """Copy a starter project into FOLDER (default: here): a rulebook, turns, a rubric, a CI workflow, pre-commit.

    It works as copied: `norma check --rules rules.yaml --batch turns.jsonl` in FOLDER passes. With --examples,
    every example norma ships goes to FOLDER/examples/ too: the documentation's examples (`norma docs`) run in
    FOLDER. Files already there with other contents are left alone and the command exits 2, unless --force (files
    already as norma writes them are not written again). --format json lists the files written.
    """
    from norma.errors import InvalidInputError

    fmt = resolve_format(ctx, output_format)
    files = starter_files()
    examples = example_files() if with_examples else {}
    files.update(examples)
    # a file already there as norma would write it is no conflict: `norma init` then `norma init --examples` works
    same = {name for name, source in files.items() if _same(folder / name, source)}
    files = {name: source for name, source in files.items() if name not in same}
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
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        except OSError as exc:  # FOLDER not writable, or a file where a folder of the starter goes
            raise unwritable(name, target, exc) from None
    result = {
        "folder": str(folder),
        "files": list(files),
        "overwritten": existing,
        "unchanged": sorted(same),
        "next": STARTER_COMMAND,
    }

    def table(con: Console) -> None:
        kept = f", {len(same)} already there as written" if same else ""
        con.print(
            f"wrote {len(files)} files to {folder}" + (f" ({len(existing)} overwritten)" if existing else "") + kept
        )
        for name in files:
            if name not in examples:
                con.print(f"  {name}")
        if examples:
            kinds = sorted({name.split("/")[1] for name in examples if name.count("/") > 1})
            con.print(f"  {EXAMPLES_FOLDER}/ ({len(examples)} files: {', '.join(kinds)})")
        where = "" if folder == Path(".") else f"cd {folder} && "
        con.print(f"next: {where}{STARTER_COMMAND}   (`norma docs` lists the documentation)")

    emit(fmt, result, table)
    return 0
