"""The ``norma`` command: a root group, its global options and the error-to-exit-code edge.

Exit codes (documented in docs/cli.md):

* 0 — success; for checks, everything passed.
* 1 — the input was evaluated and failed (violations, a failing verdict, no message matched).
* 2 — usage or input error: an unknown option, a missing file, input norma cannot read; a rulebook or a rubric with
  problems, from every command (``rules validate`` and ``rubric validate`` included). An error in a file starts
  ``FILE:LINE:COL:``, and in GitHub Actions it is an annotation too (norma.cli._errors).
* 130 — interrupted (Ctrl-C, SIGINT): ``norma: interrupted`` on stderr, whatever the command was doing.
* 141 — stdout closed before the output was all written (``| head -1``), with nothing on stderr.
* 143 — a batch (``check``, ``match``, ``audit``, ``rubric eval``) stopped by SIGTERM (it writes the records it
  finished first, as on SIGINT; see norma.cli._batch_run). Any other command ends on SIGTERM as a process does by
  default (a shell reports 143).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from norma._version import __version__
from norma.cli._errors import ErrorLine, echo_errors, error_lines
from norma.cli._lazy import LazyCommand, LazyGroup
from norma.cli._output import FORMATS
from norma.cli._relaunch import INVOCATION, Invocation
from norma.errors import NormaError

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TERMINATED", "EXIT_USAGE", "cli", "main", "run"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
"""128 + SIGINT, as shells report a command stopped by Ctrl-C."""
EXIT_TERMINATED = 143
"""128 + SIGTERM: ``norma check --batch`` stopped by SIGTERM, after writing what it finished."""
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE, as a shell reports ``yes | head``: stdout was closed before the output was all written (a pipe to
``head``); said with this code only, never as a pass (1 would read as "checks failed", 0 as "all passed")."""


_COMMANDS = {
    "audit": LazyCommand(
        "norma.cli._audit:audit", "Audit AI outputs against executable rules IR.x.y: PASS, FAIL or SKIP."
    ),
    "check": LazyCommand(
        "norma.cli._check:check",
        "Check a turn: the rules that apply to --message, the --output checked against each, a verdict and a reward.",
    ),
    "demo": LazyCommand(
        "norma.cli._demo:demo", "Walk the examples through every capability and print what each one does."
    ),
    "docs": LazyCommand(
        "norma.cli._docs:docs", "Show a page of norma's documentation in the terminal; without TOPIC, list the pages."
    ),
    "embed": LazyCommand(
        "norma.cli._embeddings:embed",
        "Embed each TEXT and print the model, the dimension and the vectors (a preview unless --full).",
    ),
    "init": LazyCommand(
        "norma.cli._init:init",
        "Copy a starter project into FOLDER (default: here): a rulebook, turns, a rubric, a CI workflow, pre-commit.",
    ),
    "keys": LazyCommand(
        "norma.cli._rules:keys", "API keys of the service: create (the secret is shown once), list, revoke."
    ),
    "llm": LazyCommand(
        "norma.cli._llm:llm",
        "LLM backend (Ollama or OpenAI-compatible) used for query phrasing, re-runs and rule examples.",
    ),
    "match": LazyCommand(
        "norma.cli._match:match",
        "Match MESSAGE (or every message of --batch FILE) against a rulebook and print the scored matches.",
    ),
    "mcp": LazyCommand(
        "norma.cli._mcp:mcp",
        "Serve norma's tools over the Model Context Protocol until the client disconnects (or SIGINT).",
    ),
    "merge": LazyCommand(
        "norma.cli._merge:merge",
        "Merge the outputs of shard runs (FILE... in shard order, 1/N first) into what one run would have written.",
    ),
    "names": LazyCommand(
        "norma.cli._names:names",
        "MIID name variations: score them as the validator does, build queries, generate good ones.",
    ),
    "rubric": LazyCommand(
        "norma.cli._rubrics:rubric", "Rubrics: weighted criteria turned into a reward (synth-ai compatible)."
    ),
    "rules": LazyCommand(
        "norma.cli._rules:rules", "Rule store: import and export rulebooks, list rules and their history."
    ),
    "serve": LazyCommand(
        "norma.cli._serve:serve",
        "Serve the HTTP API (/v1, OpenAPI at /docs) and the playground (/) until SIGINT or SIGTERM.",
    ),
}
"""Every command of ``norma``: imported only when it runs (``norma --help`` lists these helps)."""


@click.group(
    cls=LazyGroup,
    lazy=_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
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

    Exit codes: 0 success or pass, 1 evaluated and failed, 2 usage or input error, 130 interrupted (SIGINT), 143
    a batch check stopped by SIGTERM.
    """
    ctx.ensure_object(dict)
    ctx.obj["format"] = output_format
    ctx.obj["debug"] = debug


def _fail(message: str) -> int:
    """``norma: error: MESSAGE`` on one line (and in GitHub Actions, an annotation); exit 2."""
    echo_errors([ErrorLine(message)])
    return EXIT_USAGE


def _interrupted() -> int:
    click.echo("norma: interrupted", err=True)
    return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (the console script exits with it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return run(Invocation(tuple(args), "own" if argv is None else "caller"))


def run(invocation: Invocation) -> int:
    """The CLI over ``invocation.argv``; commands find the invocation in the root context's object
    (:data:`~norma.cli._relaunch.INVOCATION`)."""
    args = list(invocation.argv)
    debug = "--debug" in args
    for number, arg in enumerate(args, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape)
            return _fail(f"argument {number} is not valid UTF-8 text (norma reads its arguments as UTF-8)")
    try:
        result = cli.main(args=args, prog_name="norma", standalone_mode=False, obj={INVOCATION: invocation})
    except SystemExit:
        if type(sys.stdout).__name__.endswith("PacifyFlushWrapper"):  # click answers EPIPE on stdout with exit(1)
            return EXIT_BROKEN_PIPE
        raise
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return EXIT_USAGE
    except click.ClickException as exc:
        if debug:
            raise
        return _fail(exc.format_message())
    except click.exceptions.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):  # click turns Ctrl-C into Abort
            return _interrupted()
        return _fail("aborted")
    except KeyboardInterrupt:
        return _interrupted()
    except NormaError as exc:
        if debug:
            raise
        echo_errors(error_lines(exc))
        return EXIT_USAGE
    except BrokenPipeError:  # before OSError, of which it is one
        # no second error when the interpreter flushes stdout at exit (the Python documentation's advice)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        if debug:
            raise
        return _fail(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "))
    if isinstance(result, int):
        return result
    return EXIT_OK
