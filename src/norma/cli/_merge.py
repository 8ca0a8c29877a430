"""``norma merge``: the outputs of ``--shard 1/N`` .. ``N/N`` runs as one run would have written them."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from norma.cli._output import emit, fail_on_option, format_option, resolve_format
from norma.errors import InvalidInputError

__all__ = ["merge"]


@click.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path), metavar="FILE...")
@click.option(
    "--output",
    "-o",
    "output_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the merged output here (then stdout gets a summary, in --format).",
)
@fail_on_option("The audit's --fail-on, for the exit code of audit JSON and SARIF outputs.")
@format_option
@click.pass_context
def merge(
    ctx: click.Context, files: tuple[Path, ...], output_path: Path | None, fail_on: str, output_format: str | None
) -> int:
    """Merge the outputs of shard runs (FILE... in shard order, 1/N first) into what one run would have written.

    Takes the JSON, JSON Lines, SARIF or JUnit outputs of `norma names score`, `norma audit --batch`,
    `norma match --batch` and `norma rubric eval --batch` run with --shard i/N. Exits as that one run would
    have (0, or 1 for failed audits, failed verdicts, no message matched); 2 when the files do not fit together.
    """
    from norma.batch import merge_outputs

    shards: list[tuple[str, str]] = []
    for file in files:
        try:
            shards.append((str(file), file.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise InvalidInputError(f"cannot read it: {reason or exc}", source=str(file)) from None
    merged = merge_outputs(shards, fail_on=fail_on)
    if output_path is None:
        sys.stdout.write(merged.text)
        return merged.exit_code
    output_path.write_text(merged.text, encoding="utf-8")
    payload = {
        "format": merged.format,
        "shards": len(files),
        "records": merged.records,
        "output": str(output_path),
        "exit_code": merged.exit_code,
    }

    def table(con: Console) -> None:
        con.print(f"merged {merged.records} records of {len(files)} {merged.format} outputs into {output_path}")

    emit(resolve_format(ctx, output_format), payload, table)
    return merged.exit_code
