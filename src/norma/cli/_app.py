"""The ``norma`` command: a root group, its global options and the error-to-exit-code edge.

Exit codes (documented in docs/cli.md):

* 0 — success; for checks, everything passed.
* 1 — the input was evaluated and failed (violations, invalid rubric files, a failing verdict).
* 2 — usage or input error: an unknown option, a missing file, input norma cannot read.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from norma._version import __version__
from norma.cli._output import FORMATS
from norma.errors import NormaError

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "cli", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", "-V", prog_name="norma", message="%(prog)s %(version)s")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Output format of every command (each command also takes --format).",
)
@click.option("--debug", is_flag=True, help="Show the full traceback when something fails.")
@click.pass_context
def cli(ctx: click.Context, output_format: str, debug: bool) -> None:
    """norma: a rules engine for AI behaviour.

    Exit codes: 0 success or pass, 1 evaluated and failed, 2 usage or input error.
    """
    ctx.ensure_object(dict)
    ctx.obj["format"] = output_format
    ctx.obj["debug"] = debug


def _register() -> None:
    from norma.cli._audit import audit
    from norma.cli._demo import demo
    from norma.cli._embeddings import embed
    from norma.cli._llm import llm, rules_examples
    from norma.cli._match import match
    from norma.cli._merge import merge
    from norma.cli._names import names
    from norma.cli._rubrics import rubric
    from norma.cli._rules import keys, rules
    from norma.cli._serve import serve

    cli.add_command(audit)
    cli.add_command(demo)
    cli.add_command(embed)
    cli.add_command(match)
    cli.add_command(merge)
    cli.add_command(llm)
    cli.add_command(names)
    cli.add_command(rubric)
    cli.add_command(keys)
    cli.add_command(rules)
    rules.add_command(rules_examples)
    cli.add_command(serve)


_register()


def _fail(message: str) -> int:
    click.echo(f"norma: error: {' '.join(message.split())}", err=True)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (the console script exits with it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    for number, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape)
            return _fail(f"argument {number} is not valid UTF-8 text (norma reads its arguments as UTF-8)")
    try:
        result = cli.main(args=args, prog_name="norma", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return EXIT_USAGE
    except click.ClickException as exc:
        if debug:
            raise
        return _fail(exc.format_message())
    except click.exceptions.Abort:
        return _fail("aborted")
    except NormaError as exc:
        if debug:
            raise
        return _fail(str(exc))
    except OSError as exc:
        if debug:
            raise
        return _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
    except BrokenPipeError:
        return EXIT_OK
    if isinstance(result, int):
        return result
    return EXIT_OK
