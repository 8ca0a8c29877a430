"""``norma rules coverage --turns FILE``: what a rulebook covers on recorded traffic, a thin adapter over
:meth:`norma.Norma.coverage` (read the turns, one library call, render, map errors to exit codes).

The turns file is the JSON Lines of ``norma check --batch`` (``{"message", "output", "session"?, "id"?}`` a line);
only the messages (and their sessions) are used, so lines without ``output`` are accepted too. A bad line stops the
command before anything is embedded (exit 2, ``FILE:LINE:COL:``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._batch_run import allow_empty_option
from norma.cli._encoder import Encoder
from norma.cli._output import (
    check_rules_source,
    console,
    model_dir_option,
    print_table,
    resolve_format,
    rules_source_options,
    wide_option,
    write_text,
)

if TYPE_CHECKING:
    from norma.errors import InvalidInputError
    from norma.turns import Coverage, Norma

__all__ = ["coverage_command"]

MAX_TURN_LINE_BYTES = 4 * 1024 * 1024
"""Longest line read from a turns file (as ``norma check --batch``)."""
FORMATS = ("table", "json", "markdown")
_RECORD = re.compile(r"messages\[(?P<index>\d+)\](?:\.(?P<field>.+))?")


def _read(source: str) -> tuple[list[dict[str, Any]], list[int], str]:
    """The records of the turns file (``-``: stdin), the line of each, and the file's name for messages.

    Raises:
        InvalidInputError: the file cannot be read, a line is not UTF-8 or not JSON, or not a JSON object (each
            ``FILE:LINE[:COL]``); LimitExceededError: a line over 4 MiB.
    """
    from norma._safety import bounded_lines
    from norma.errors import InvalidInputError

    name = "<stdin>" if source == "-" else source
    try:
        if source == "-":
            lines = list(bounded_lines(sys.stdin.buffer, source=name, max_bytes=MAX_TURN_LINE_BYTES))
        else:
            with open(source, "rb") as handle:
                lines = list(bounded_lines(handle, source=name, max_bytes=MAX_TURN_LINE_BYTES))
    except OSError as exc:
        raise InvalidInputError(f"cannot read it: {exc.strerror or exc}", source=source) from None
    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    for number, text in lines:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"not valid JSON: {exc.msg}", source=name, line=number, column=exc.colno) from None
        if not isinstance(value, dict):
            raise InvalidInputError(
                f"a turn record is a JSON object, not {type(value).__name__}",
                source=name,
                line=number,
                hint='write {"message": "...", "output": "..."} (output optional here)',
            )
        records.append(value)
        numbers.append(number)
    return records, numbers, name


def _placed(exc: InvalidInputError, numbers: list[int], name: str) -> InvalidInputError:
    """The library's error about ``messages[i].field`` as the turns file's ``FILE:LINE: field:``."""
    found = _RECORD.fullmatch(exc.location or "")
    if found is not None:
        exc.source, exc.line, exc.column = name, numbers[int(found["index"])], None
        exc.location = found["field"]
    return exc


def _open(
    rules_file: Path | None, tenant_id: str | None, db_url: str | None, model_dir: Path | None
) -> tuple[Norma, str, int | None]:
    """The rules of --rules FILE or --tenant (read once, no judge: nothing is checked), a name for them and the
    tenant's rules version when the ``Norma`` does not know it; with --model-dir, their matcher embeds with that
    encoder (``norma.open`` takes no encoder: the matcher is built here, as ``open`` builds it)."""
    from norma.turns import open as open_rules

    if model_dir is None:
        if tenant_id is not None:
            return open_rules(tenant=tenant_id, store=db_url, judge=None), f"tenant {tenant_id}", None
        return open_rules(rules_file, judge=None), str(rules_file), None
    from norma.matching import file_matcher, snapshot_matcher
    from norma.store import open_tenant_store

    if tenant_id is not None:
        with open_tenant_store(tenant_id, db_url) as store:
            matcher = snapshot_matcher(store, tenant_id, **Encoder.of(model_dir).matcher_options())
            version = store.version(tenant_id)
        return open_rules(matcher, judge=None), f"tenant {tenant_id}", version
    assert rules_file is not None
    matcher = file_matcher(rules_file, **Encoder.of(model_dir).matcher_options())
    return open_rules(matcher, judge=None), str(rules_file), None


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr in a terminal; else a line at a steady pace (``$NORMA_PROGRESS_SECONDS``), as
    every batch command shows it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from norma.cli._engine import _progress_every, progress_line

    terminal = sys.stderr.isatty()
    every = None if terminal else _progress_every()
    started = last = time.monotonic()
    bar = Progress(
        TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True, disable=not terminal,
    )  # fmt: skip
    with bar:
        task = bar.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            nonlocal last
            bar.update(task, completed=done, total=total)
            now = time.monotonic()
            if every is not None and now - last >= every and done < total:
                last = now
                click.echo(progress_line(label, done, total, now - started), err=True)

        yield advance


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _pct(count: int, total: int) -> str:
    return f"{100 * count / total:.1f} %" if total else "-"


def _cut(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _summary(name: str, source: str, found: Coverage) -> list[str]:
    """The lines every format starts with."""
    n = found.turns
    return [
        f"{name}: {len(found.rules)} rules; {source}: {n} turns",
        f"governed {found.governed} ({_pct(found.governed, n)}), neighbour only {found.neighbour_only} "
        f"({_pct(found.neighbour_only, n)}), unmatched {found.unmatched} ({_pct(found.unmatched, n)})",
    ]


def _ids(ids: tuple[str, ...], limit: int) -> str:
    shown = ", ".join(ids[:limit]) or "none"
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _nearest(rule_id: str | None, similarity: float | None) -> str:
    return "-" if rule_id is None or similarity is None else f"{rule_id} ({similarity:.2f})"


def _render_table(name: str, source: str, found: Coverage, limit: int) -> Callable[[Console], None]:
    def render(con: Console) -> None:
        for line in _summary(name, source, found):
            con.print(escape(line), soft_wrap=True)
        n = found.turns
        rules = Table(title=f"rules ({min(limit, len(found.rules))} of {len(found.rules)})", title_justify="left")
        rules.add_column("rule", no_wrap=True)
        for column in ("governs", "share", "neighbour"):
            rules.add_column(column, justify="right", no_wrap=True)
        for r in found.rules[:limit]:
            rule_id = r.rule_id if r.enabled else f"{r.rule_id} (disabled)"
            rules.add_row(escape(rule_id), str(r.governs), _pct(r.governs, n), str(r.neighbour))
        print_table(con, rules)
        con.print(escape(f"never governs ({len(found.never_governs)}): {_ids(found.never_governs, limit)}"))
        con.print(escape(f"never matched ({len(found.never_matched)}): {_ids(found.never_matched, limit)}"))
        clusters = Table(
            title=f"ungoverned messages: {found.ungoverned}, {_count(len(found.clusters), 'cluster')}, largest first",
            title_justify="left",
        )
        clusters.add_column("size", justify="right", no_wrap=True)
        clusters.add_column("words")
        clusters.add_column("nearest rule (similarity)")
        clusters.add_column("examples")
        for c in found.clusters[:limit]:
            examples = "\n".join(_cut(e.message) for e in c.examples)
            clusters.add_row(
                str(c.size),
                escape(", ".join(c.terms) or "-"),
                escape(_nearest(c.nearest_rule, c.nearest_similarity)),
                escape(examples),
            )
        if found.clusters:
            print_table(con, clusters)
        else:
            con.print(clusters.title)
        more = len(found.clusters) - limit
        if more > 0:
            con.print(f"and {_count(more, 'more cluster')} (--limit, or --format json for all)")
        con.print(f"{_count(found.other_ungoverned, 'other ungoverned message')} in no cluster")
        competing = Table(title=f"competing rules ({_count(len(found.competing), 'pair')})", title_justify="left")
        competing.add_column("rules")
        for column in ("messages", "both govern", "a first", "b first"):
            competing.add_column(column, justify="right", no_wrap=True)
        competing.add_column("example")
        for p in found.competing[:limit]:
            competing.add_row(
                escape(f"{p.rule_a}\n{p.rule_b}"), str(p.messages), str(p.both_govern), str(p.a_first),
                str(p.b_first), escape(_cut(p.example.message)),
            )  # fmt: skip
        if found.competing:
            print_table(con, competing)
        else:
            con.print("competing rules: none")

    return render


def _md(text: str) -> str:
    """``text`` in a Markdown table cell."""
    return " ".join(text.split()).replace("\\", "\\\\").replace("|", "\\|")


def _markdown(name: str, source: str, found: Coverage, limit: int) -> str:
    n = found.turns
    out = ["# Rule coverage", "", *(f"{line}  " for line in _summary(name, source, found)), ""]
    out += ["## Rules", "", "| rule | governs | share | neighbour |", "|---|---:|---:|---:|"]
    for r in found.rules[:limit]:
        rule_id = f"`{r.rule_id}`" + ("" if r.enabled else " (disabled)")
        out.append(f"| {rule_id} | {r.governs} | {_pct(r.governs, n)} | {r.neighbour} |")
    if len(found.rules) > limit:
        out.append(f"\n{len(found.rules) - limit} more rules.")
    out += ["", f"Never governs ({len(found.never_governs)}): {_ids(found.never_governs, limit)}  "]
    out += [f"Never matched ({len(found.never_matched)}): {_ids(found.never_matched, limit)}", ""]
    out += [f"## Ungoverned messages ({found.ungoverned})", ""]
    if found.clusters:
        out += ["| size | words | nearest rule | examples |", "|---:|---|---|---|"]
        for c in found.clusters[:limit]:
            examples = "<br>".join(_md(_cut(e.message)) for e in c.examples)
            nearest = _md(_nearest(c.nearest_rule, c.nearest_similarity))
            out.append(f"| {c.size} | {_md(', '.join(c.terms)) or '-'} | {nearest} | {examples} |")
        if len(found.clusters) > limit:
            out.append(f"\n{len(found.clusters) - limit} more clusters.")
        out.append("")
    out += [f"{_count(found.other_ungoverned, 'other ungoverned message')} in no cluster.", ""]
    out += ["## Competing rules", ""]
    if found.competing:
        out += ["| rules | messages | both govern | a first | b first | example |", "|---|---:|---:|---:|---:|---|"]
        for p in found.competing[:limit]:
            out.append(
                f"| `{p.rule_a}`, `{p.rule_b}` | {p.messages} | {p.both_govern} | {p.a_first} | {p.b_first} | "
                f"{_md(_cut(p.example.message))} |"
            )
    else:
        out.append("None.")
    return "\n".join(out) + "\n"


def _format(ctx: click.Context, local: str | None) -> str:
    return "markdown" if local == "markdown" else resolve_format(ctx, local)


@click.command("coverage")
@click.option(
    "--turns",
    "turns_file",
    required=True,
    metavar="FILE",
    help='Recorded turns, JSON Lines as norma check --batch reads them ({"message": ..., "output": ..., "session": '
    '..., "id": ...}; output optional); - reads stdin.',
)
@rules_source_options(rules_help="A rulebook file (YAML or JSON).", tenant_help="A tenant of the store.")
@model_dir_option
@click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
              help="A human table (default), JSON (everything, no --limit) or Markdown.")  # fmt: skip
@wide_option
@click.option("--out", "output_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report to this file (atomically) instead of stdout.")  # fmt: skip
@click.option("--limit", type=click.IntRange(min=1), default=10, show_default=True,
              help="Rules, clusters and pairs listed per section in the table and Markdown.")  # fmt: skip
@click.option("--fail-on", type=click.Choice(["ungoverned-rule", "never"]), default="never", show_default=True,
              help="ungoverned-rule: exit 1 when an enabled rule governs no turn.")  # fmt: skip
@allow_empty_option("turns", "reports nothing", file="A FILE")
@click.pass_context
def coverage_command(
    ctx: click.Context,
    turns_file: str,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    model_dir: Path | None,
    output_format: str | None,
    output_path: Path | None,
    limit: int,
    fail_on: str,
    allow_empty: bool,
) -> int:
    """What a rulebook covers on recorded turns: each rule's share, rules that govern none, gaps, competing rules.

    Every message of the turns is embedded once and matched: the turns each rule governs (confidence >= 0.7) and
    those where it is only relevant; the enabled rules that never govern (or never match); the messages no rule
    governs, clustered (average linkage, mean cosine >= 0.5), each cluster with its size, its most central messages,
    its most telling words and the nearest rule; the pairs of rules that govern the same messages or swap the top
    place within 0.05 of similarity. Exit 0 when reported, 1 with --fail-on ungoverned-rule when an enabled rule
    governs no turn, 2 on bad input.
    """
    from norma.errors import InvalidInputError
    from norma.turns import coverage

    fmt = _format(ctx, output_format)
    check_rules_source(rules_file, tenant_id, db_url)
    records, numbers, name = _read(turns_file)
    if not records and not allow_empty:
        from norma.cli._batch_run import no_records

        raise no_records(turns_file, "turns")
    norma, rulebook, version = _open(rules_file, tenant_id, db_url, model_dir)
    with _progress("coverage") as progress:
        try:
            found = coverage(norma, records, progress=progress)
        except InvalidInputError as exc:
            raise _placed(exc, numbers, name) from None
    if version is not None:
        found = dataclasses.replace(found, rules_version=version)
    if fmt == "json":
        payload = {"rulebook": rulebook, "turns_file": name, **found.to_dict()}
        write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", output_path, "the json report")
    elif fmt == "markdown":
        write_text(_markdown(rulebook, name, found, limit), output_path, "the markdown report")
    elif output_path is None:
        _render_table(rulebook, name, found, limit)(console())
    else:
        buffer = io.StringIO()
        _render_table(rulebook, name, found, limit)(Console(file=buffer, highlight=False, soft_wrap=True))
        write_text(buffer.getvalue(), output_path, "the table")
    return 1 if fail_on == "ungoverned-rule" and found.turns and found.never_governs else 0
