"""Options every batch command shares (``--engine``, ``--workers``, ``--ray-address``, ``--shard``, ``-v``) and the
one way they run a job: plan the engine, show a progress bar on stderr, say what was chosen with ``-v``."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from norma.cli._errors import ErrorLine, echo_errors
from norma.errors import ConfigError, NormaError

if TYPE_CHECKING:
    from norma.batch import BatchRecord, BatchResult, Job, Shard, Workers

ENGINES = ("local", "pool", "ray")
"""The engines of :mod:`norma.batch` (listed here so that ``--help`` does not import the engines)."""

__all__ = ["EngineOptions", "batch_output_options", "engine_options", "run_batch"]

F = TypeVar("F", bound=Callable[..., Any])


class _WorkersType(click.ParamType["Workers", "str | int"]):
    name = "N|auto"

    def convert(self, value: str | int, param: click.Parameter | None, ctx: click.Context | None) -> Workers:
        if value == "auto":  # the default: no need to import the engines (a one-message command never does)
            return "auto"
        from norma.batch import check_workers

        try:
            return check_workers(value)
        except NormaError:
            self.fail(f"{value!r} is not a worker count (an integer >= 1) or auto", param, ctx)


class _ShardType(click.ParamType["Shard", "str | Shard"]):
    name = "i/N"

    def convert(self, value: str | Shard, param: click.Parameter | None, ctx: click.Context | None) -> Shard:
        from norma.batch import Shard

        if isinstance(value, Shard):
            return value
        try:
            return Shard.parse(value)
        except NormaError as exc:
            self.fail(exc.message, param, ctx)


@dataclass(frozen=True)
class EngineOptions:
    """What the shared options said."""

    engine: str | None
    workers: Workers
    ray_address: str | None
    shard: Shard | None
    verbose: bool

    @classmethod
    def pop(cls, params: dict[str, Any]) -> EngineOptions:
        """Take the shared options out of a command's keyword arguments."""
        return cls(
            params.pop("engine"),
            params.pop("workers"),
            params.pop("ray_address"),
            params.pop("shard"),
            params.pop("verbose"),
        )


def engine_options(func: F) -> F:
    """Add ``--engine``, ``--workers``, ``--ray-address``, ``--shard`` and ``-v`` to a batch command."""
    options = [
        click.option(
            "--engine",
            type=click.Choice(ENGINES),
            default=None,
            help="local (this process), pool (local processes) or ray (Ray actors; pip install 'norma-rules[ray]'). "
            "Default: local or pool, from --workers.",
        ),
        click.option(
            "--workers",
            type=_WorkersType(),
            default="auto",
            show_default=True,
            help="Processes (pool) or actors (ray); auto: one process unless the batch is large enough to pay "
            "for more (-v says what it chose).",
        ),
        click.option(
            "--ray-address",
            default=None,
            metavar="ADDRESS",
            help="Join this Ray cluster (auto, ray://host:10001); default: start a local one.",
        ),
        click.option(
            "--shard",
            type=_ShardType(),
            default=None,
            help="Run only shard i of N (contiguous records, 1-based); `norma merge` joins the outputs.",
        ),
        click.option("-v", "--verbose", is_flag=True, help="Say which engine and how many workers were chosen."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def record_line(where: str) -> int:
    """The line (or Parquet row) of a batch record named ``file:N`` or ``file:row N``."""
    return int(where.rsplit(":", 1)[1].removeprefix("row "))


def succeeded(results: Sequence[BatchResult]) -> tuple[list[tuple[int, Any]], int]:
    """The results of the records that worked, as ``(line, result)``, and how many did not: each of those is
    reported on stderr, one line naming its record (the others are still written; the command exits 2)."""
    good: list[tuple[int, Any]] = []
    errors = 0
    for item in results:
        if item.error is not None or item.result is None:
            errors += 1
            echo_errors([ErrorLine.of_record(item.where, str(item.error))])
            continue
        good.append((record_line(item.where), item.result))
    return good, errors


PROGRESS_ENV = "NORMA_PROGRESS_SECONDS"
"""Seconds between two progress lines of a batch whose stderr is not a terminal (a CI log); default 30, 0: one a
record."""
_PROGRESS_SECONDS = 30.0


def _progress_every() -> float:
    import os

    value = os.environ.get(PROGRESS_ENV, "").strip()
    if not value:
        return _PROGRESS_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigError(f"${PROGRESS_ENV} must be a number of seconds, not {value!r}", hint="unset it: 30") from None
    if not seconds >= 0:
        raise ConfigError(f"${PROGRESS_ENV} must be a number of seconds >= 0, not {value!r}", hint="unset it: 30")
    return seconds


def progress_line(label: str, done: int, total: int, seconds: float) -> str:
    """A batch's progress for a log: ``norma: checking: 1,200 of 30,000 records (40.1/s, 12:00 left)``."""
    rate = done / seconds if seconds > 0 else 0.0
    left = (total - done) / rate if rate > 0 else None
    eta = "" if left is None else f", {int(left // 60)}:{int(left % 60):02d} left"
    return f"norma: {label}: {done:,} of {total:,} records ({rate:.1f}/s{eta})"


def run_batch(
    job: Job,
    records: Sequence[BatchRecord],
    options: EngineOptions,
    label: str,
    *,
    skip: Collection[int] = (),
    on_result: Callable[[BatchResult], None] | None = None,
) -> list[BatchResult]:
    """Apply ``--shard``, plan the engine, run ``job`` with a progress bar on stderr and return the results.

    ``skip``: the indexes of records not to run (done before: ``--resume``); ``on_result`` is called with each result
    as it arrives (in input order except from Ray, the bad records first), before the progress bar moves.
    """
    from norma.batch import plan_engine, run_job

    chosen = list(records) if options.shard is None else options.shard.select(records)
    selected = len(chosen)
    if skip:
        chosen = [record for record in chosen if record.index not in skip]
    resumed = f", {selected - len(chosen)} records done before (--resume)" if skip else ""
    plan = plan_engine(
        job,
        len(chosen),
        engine=options.engine,  # type: ignore[arg-type]
        workers=options.workers,
        ray_address=options.ray_address,
    )
    if options.verbose:
        shard = "" if options.shard is None else f", shard {options.shard} ({selected} of {len(records)} records)"
        click.echo(f"norma: {plan.describe()}{shard}{resumed}", err=True)
    elif isinstance(options.workers, int) and plan.workers < options.workers:  # fewer than asked: never silently
        click.echo(f"norma: --workers {options.workers}: {plan.describe()}", err=True)
    progress = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        auto_refresh=False,
        disable=not sys.stderr.isatty(),
    )
    shown = [0.0]
    log_every = None if sys.stderr.isatty() else _progress_every()  # a log: a line at a steady pace, no bar
    last_line, done = [time.monotonic()], [0]
    with progress:
        task = progress.add_task(label, total=len(chosen))

        def advance(item: BatchResult) -> None:
            if on_result is not None:
                on_result(item)
            now = time.monotonic()
            refresh = now - shown[0] > 0.1  # redraw at most 10 times a second
            progress.update(task, advance=1, refresh=refresh)
            if refresh:
                shown[0] = now
            if log_every is not None:
                done[0] += 1
                if now - last_line[0] >= log_every and done[0] < len(chosen):
                    last_line[0] = now
                    click.echo(progress_line(label, done[0], len(chosen), now - started), err=True)

        started = time.monotonic()
        results = run_job(
            job,
            chosen,
            engine=plan.engine,
            workers=plan.workers,
            ray_address=options.ray_address,
            on_result=advance,
        )
    if options.verbose:
        click.echo(f"norma: {len(results)} records in {time.monotonic() - started:.2f} s", err=True)
    return results


def batch_output_options(unit: str, *, batch_form: bool = True) -> Callable[[F], F]:
    """``--output F`` (a .parquet file: one row per ``unit``) and ``--format table|json|jsonl``; with
    ``batch_form`` the command has a one-item form too, and these apply to its ``--batch`` form."""
    when = "(with --batch) " if batch_form else ""

    def decorate(func: F) -> F:
        func = click.option(
            "--format",
            "output_format",
            type=click.Choice(["table", "json", "jsonl"]),
            default=None,
            help=f"A human table (default), JSON, or {when}JSON Lines (one result per line).",
        )(func)
        return click.option(
            "--output",
            "output_path",
            type=click.Path(dir_okay=False, writable=True, path_type=Path),
            default=None,
            help=f"{'With --batch: write' if batch_form else 'Write'} the results here instead of stdout (a .parquet "
            f"file: one row per {unit}).",
        )(func)

    return decorate
