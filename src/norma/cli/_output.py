"""Output helpers shared by every command: one ``--format`` option, one way to print results and tables.

Tables never cut an id or a header: a table wider than the terminal wraps its long cells between words when that
keeps every id (no-wrap columns) and header whole, else it is printed as records (one ``header: value`` line per
cell, a blank line between rows); ``--wide`` prints the whole table at its natural width instead (lines longer than
the terminal, for a pager or a file).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import click
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

if TYPE_CHECKING:
    from norma.errors import InvalidInputError

__all__ = [
    "DB_URL_ENV",
    "REPORT_FILE_FORMATS",
    "FORMATS",
    "OutputFormat",
    "check_rules_source",
    "console",
    "db_option",
    "emit",
    "fail_on_option",
    "format_option",
    "model_dir_option",
    "print_table",
    "unwritable",
    "replace_file",
    "report_option",
    "resolve_format",
    "rules_source_options",
    "wide_option",
    "write_document",
    "write_text",
]

OutputFormat = Literal["table", "json"]
FORMATS: tuple[OutputFormat, ...] = ("table", "json")

F = TypeVar("F", bound=Callable[..., Any])


def console() -> Console:
    """The console human output goes to (stdout; no colours when it is not a terminal)."""
    return Console(highlight=False, soft_wrap=True)


_WIDE = "norma.wide"


def _set_wide(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[_WIDE] = True


def wide_option(func: F) -> F:
    """Add ``--wide`` (tables at their full width, never as records) without a parameter of the command's own."""
    option = click.option(
        "--wide",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_wide,
        help="Print tables at their full width, even when wider than the terminal.",
    )
    return option(func)


REPORT_FILE_FORMATS = ("json", "sarif", "junit", "markdown")
"""What ``--report FORMAT=FILE`` writes (``norma audit``, ``norma check``)."""


def _report_specs(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[tuple[str, Path]]:
    specs = []
    for spec in value:
        fmt, sep, file = spec.partition("=")
        if not sep or fmt not in REPORT_FILE_FORMATS or not file:
            raise click.BadParameter(
                f"{spec!r} is not FORMAT=FILE with FORMAT one of {', '.join(REPORT_FILE_FORMATS)} "
                "(e.g. --report sarif=report.sarif)",
                ctx,
                param,
            )
        specs.append((fmt, Path(file)))
    return specs


def report_option(func: F) -> F:
    """``--report FORMAT=FILE`` (repeatable), parsed into ``reports_to_write``: ``[(format, path), ...]``."""
    return click.option(
        "--report",
        "reports_to_write",
        multiple=True,
        callback=_report_specs,
        metavar="FORMAT=FILE",
        help="Also write the reports in FORMAT (json, sarif, junit, markdown) to FILE; repeatable.",
    )(func)


DB_URL_ENV = "NORMA_DB_URL"
"""norma.store.DB_URL_ENV, spelt out so that `--help` need not import the store (tests/cli/test_startup.py keeps
it equal)."""


def write_text(text: str, path: Path | None, what: str = "the output") -> None:
    """``text`` to ``path`` at once (:func:`replace_file`), or to stdout when ``path`` is None.

    Raises:
        InvalidInputError: the file cannot be written (``what`` names it in the message).
    """
    if path is None:
        sys.stdout.write(text)
        return
    try:
        replace_file(path, text)
    except OSError as exc:
        raise unwritable(what, path, exc) from None


def unwritable(what: str, path: Path, exc: OSError) -> InvalidInputError:
    """The error of a file that cannot be written (``what`` names it)."""
    from norma.errors import InvalidInputError

    return InvalidInputError(
        f"cannot write {what}: {exc.strerror or exc}",
        source=str(path),
        hint="give a file in a folder that exists and is writable",
    )


def replace_file(path: Path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8, or bytes as they are) to ``path`` atomically: to a temporary file beside it, flushed to
    disk, then renamed over it. Whenever the command is stopped (Ctrl-C, SIGTERM, SIGKILL, a full disk), ``path``
    holds either what it held before or the whole of ``text``, never a part; a file already there keeps its
    permissions, a symbolic link keeps pointing where it did (its target is replaced). What is not a regular file
    (``/dev/stdout``, a FIFO) is written as it is.

    Raises:
        OSError: the folder does not exist or is not writable, or ``path`` is a file that is not writable.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    target = Path(os.path.realpath(path))
    try:
        existing: os.stat_result | None = target.stat()
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        target.write_bytes(data)
        return
    if existing is not None and not os.access(target, os.W_OK):  # a read-only file is not replaced behind its back
        raise PermissionError(13, os.strerror(13), str(path))
    for _ in range(100):
        temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
            break
        except FileExistsError:  # pragma: no cover - 100 random names taken
            continue
    else:  # pragma: no cover
        raise FileExistsError(17, os.strerror(17), str(temporary))
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if existing is not None:
            os.chmod(temporary, stat.S_IMODE(existing.st_mode))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def db_option(func: F) -> F:
    """``--db URL`` (also ``$NORMA_DB_URL``): the rule store."""
    return click.option(
        "--db",
        "db_url",
        envvar=DB_URL_ENV,
        default=None,
        metavar="URL",
        help="The rule store: sqlite:////abs/path.db, sqlite:///./rel/path.db or postgresql://… "
        f"(default ${DB_URL_ENV}, else ./.norma/norma.db).",
    )(func)


def rules_source_options(*, rules_help: str, tenant_help: str) -> Callable[[F], F]:
    """``--rules FILE`` or ``--tenant TENANT`` with ``--db URL`` (the store of the tenant, never created): where a
    command's rules come from. :func:`check_rules_source` checks that exactly one was given."""

    def decorate(func: F) -> F:
        func = click.option(
            "--db",
            "db_url",
            envvar=DB_URL_ENV,
            default=None,
            metavar="URL",
            help=f"The store of --tenant (default ${DB_URL_ENV}, else ./.norma/norma.db); never created here.",
        )(func)
        func = click.option("--tenant", "tenant_id", default=None, metavar="TENANT", help=tenant_help)(func)
        return click.option(
            "--rules",
            "rules_file",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            default=None,
            help=rules_help,
        )(func)

    return decorate


def check_rules_source(rules_file: Path | None, tenant_id: str | None, db_url: str | None) -> None:
    """Exactly one of ``--rules`` and ``--tenant``; ``--db`` on the command line only with ``--tenant`` (from
    ``$NORMA_DB_URL`` it is simply unused by a ``--rules`` file)."""
    if (rules_file is None) == (tenant_id is None):
        raise click.UsageError("give the rules: --rules FILE or --tenant TENANT (one of them)")
    if (
        db_url is not None
        and tenant_id is None
        and click.get_current_context().get_parameter_source("db_url") == click.core.ParameterSource.COMMANDLINE
    ):
        raise click.UsageError("--db goes with --tenant (a --rules file needs no store)")


def fail_on_option(help: str) -> Callable[[F], F]:
    """``--fail-on error|warning`` (default ``error``): which audit findings make the exit code 1."""
    return click.option(
        "--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True, help=help
    )


def format_option(func: F) -> F:
    """Add ``--format table|json`` (and ``--wide``) to a command; without ``--format`` the root option (default
    ``table``) applies."""
    option = click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default=None,
        help="Output format: a human table (default) or JSON.",
    )
    return wide_option(option(func))


def _wide() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(_WIDE))


def print_table(con: Console, table: Table) -> None:
    """Print ``table`` whole: at its width when it fits the console (or with ``--wide``), else with its long cells
    wrapped when that keeps every id and header whole, else as records."""
    needed = Measurement.get(con, con.options.update(width=10_000), table)
    if needed.maximum <= con.width:
        con.print(table)
    elif _wide():
        terminal = con.width
        con.width = needed.maximum
        try:
            con.print(table, crop=False)
        finally:
            con.width = terminal
    elif needed.minimum <= con.width:  # long cells wrap between words; ids (no_wrap columns) and headers stay whole
        con.print(table)
    else:
        _print_records(con, table)


def _print_records(con: Console, table: Table) -> None:
    """One ``header: value`` line per cell and a blank line between rows (the headers and cells in full)."""
    if table.title:
        con.print(table.title)
    columns = [list(column.cells) for column in table.columns]
    if not table.show_header and len(columns) == 2:  # a key-value table: one "key: value" line per row
        for key, value in zip(*columns, strict=True):
            _print_cell(con, str(key), value)
        return
    headers = [str(column.header) or f"column {i + 1}" for i, column in enumerate(table.columns)]
    for row in range(table.row_count):
        if row or table.title:
            con.print()
        for header, cells in zip(headers, columns, strict=True):
            _print_cell(con, header, cells[row] if row < len(cells) else "")


def _print_cell(con: Console, header: str, value: Any) -> None:
    if not isinstance(value, str):
        con.print(f"{header}:")
        con.print(value)
        return
    first, *more = value.split("\n")
    con.print(f"{header}: {first}")
    for line in more:
        con.print(f"  {line}")


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


def write_document(
    fmt: str,
    document: dict[str, Any],
    rows: list[dict[str, Any]],
    output_path: Path | None,
    table: Callable[[Console, dict[str, Any]], None],
) -> None:
    """A batch command's output to ``output_path`` (written atomically: :func:`write_text`; default stdout): ``rows``
    as JSON Lines (``fmt`` ``jsonl``), ``document`` as JSON, or ``table(console, document)`` for people."""
    if fmt == "table" and output_path is None:
        table(console(), document)
        return
    if fmt == "jsonl":
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    elif fmt == "json":
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:
        buffer = io.StringIO()
        table(Console(file=buffer, highlight=False, soft_wrap=True), document)
        text = buffer.getvalue()
    write_text(text, output_path, f"the {fmt} output")


def model_dir_option(func: F) -> F:
    """``--model-dir DIR``: the encoder to embed with (an adapted one, or any sentence-transformers BERT folder),
    given to the command as ``model_dir`` (None: the library's default, ``$NORMA_MODEL_DIR`` or the packaged model);
    the command hands it to each library call (:class:`norma.cli._encoder.Encoder`)."""
    return click.option(
        "--model-dir",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        default=None,
        help="The encoder to embed with: a folder from `norma rules adapt` or any sentence-transformers BERT model "
        "(the same as $NORMA_MODEL_DIR; default: all-MiniLM-L6-v2).",
    )(func)
