"""``norma rules eval`` (how a rulebook answers labelled messages) and ``norma rules doctor`` (what is wrong with it
before any message): thin adapters over :func:`norma.matching.evaluate_rulebook` and
:func:`norma.matching.diagnose_rulebook`. Both read a rulebook file or a tenant of an existing store, and write
nothing to either (a missing SQLite store is an error, never created)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._encoder import chosen_encoder
from norma.cli._output import (
    check_rules_source,
    emit,
    format_option,
    model_dir_option,
    resolve_format,
    rules_source_options,
)
from norma.errors import NotFoundError
from norma.matching import (
    Diagnosis,
    RulebookEvaluation,
    RuleMatcher,
    diagnose_rulebook,
    evaluate_rulebook,
    file_matcher,
    load_labelled,
    load_rules,
    snapshot_matcher,
)
from norma.store import open_store

__all__ = ["doctor_command", "eval_command", "priority_changes", "source_options", "source_rules"]

F = TypeVar("F", bound=Callable[..., Any])
_TOP = 10  # rows of the confusion and worst-rule tables


def source_options(func: F) -> F:
    """``--rules FILE`` or ``--tenant T`` (with ``--db URL``), and ``--model-dir DIR`` (the command's
    ``model_dir``)."""
    source = rules_source_options(rules_help="A rulebook file (YAML or JSON).", tenant_help="A tenant of the store.")
    return source(model_dir_option(func))


@contextmanager
def _tenant_store(tenant_id: str, db_url: str | None) -> Iterator[Any]:
    """The existing store (never created) holding ``tenant_id``'s rules."""
    store = open_store(db_url, create=False)
    try:
        if not store.list_rules(tenant_id):
            raise NotFoundError(f"tenant {tenant_id!r} has no rules in {store.url}", hint="check --tenant and --db")
        yield store
    finally:
        store.close()


@contextmanager
def _matcher(
    rules_file: Path | None, tenant_id: str | None, db_url: str | None, model_dir: Path | None
) -> Iterator[tuple[RuleMatcher, str]]:
    """The rulebook's matcher (embedding with the encoder of ``model_dir``, default the default one) and a name for
    it (the file, or ``tenant T``)."""
    check_rules_source(rules_file, tenant_id, db_url)
    if rules_file is not None:
        yield file_matcher(rules_file, **_encoder_options(model_dir)), str(rules_file)
        return
    assert tenant_id is not None
    with _tenant_store(tenant_id, db_url) as store:
        yield snapshot_matcher(store, tenant_id, **_encoder_options(model_dir)), f"tenant {tenant_id}"


def _encoder_options(model_dir: Path | None) -> dict[str, Any]:
    """The matcher's ``embedder`` and ``held_out`` of ``--model-dir`` (none without it: the library's defaults)."""
    encoder = chosen_encoder(model_dir)
    return {} if encoder is None else encoder.matcher_options()


def source_rules(rules_file: Path | None, tenant_id: str | None, db_url: str | None) -> tuple[list[Any], str]:
    """The rules of ``--rules FILE`` or ``--tenant T`` and a name for them (no matcher built)."""
    check_rules_source(rules_file, tenant_id, db_url)
    if rules_file is not None:
        return load_rules(rules_file), str(rules_file)
    assert tenant_id is not None
    with _tenant_store(tenant_id, db_url) as store:
        return store.list_rules(tenant_id), f"tenant {tenant_id}"


def _cuts(ctx: click.Context, param: click.Parameter, value: str) -> tuple[int, ...]:
    try:
        cuts = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers", ctx, param) from None
    if not cuts or min(cuts) < 1:
        raise click.BadParameter(f"{value!r}: every k must be 1 or more", ctx, param)
    return cuts


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def priority_changes(ev: RulebookEvaluation) -> list[dict[str, Any]]:
    """:attr:`RulebookEvaluation.priority_changed` as ``{"line", "message", "expected", "top_by_relevance",
    "returned"}`` records, ``returned`` being what the matcher returns, best first."""
    return [
        {
            "line": o.line,
            "message": o.message,
            "expected": list(o.expected),
            "top_by_relevance": o.ranked[0],
            "returned": list(o.matched),
        }
        for o in ev.priority_changed
    ]


def _render_eval(
    name: str, rules: int, ev: RulebookEvaluation, changed: list[dict[str, Any]]
) -> Callable[[Console], None]:
    def render(con: Console) -> None:
        gate = f"{ev.gate['kind']}: {ev.gate['description']}"
        con.print(escape(f"{name}: {rules} rules"), soft_wrap=False)
        con.print(f"{ev.messages} messages: {ev.labelled} expect a rule, {ev.expect_nothing} expect none")
        con.print(escape(f"gate: {gate}"), soft_wrap=False)
        summary = Table(title="summary", title_justify="left")
        summary.add_column("figure", no_wrap=True)
        summary.add_column("value", justify="right", no_wrap=True)
        summary.add_column("what it counts")
        summary.add_row("acc@1", _num(ev.accuracy_at_1), "top-ranked rule expected (relevance, no gate)")
        for cut, value in ev.recall_at_k.items():
            if cut != 1:
                summary.add_row(f"recall@{cut}", _num(value), f"an expected rule in the top {cut} (relevance)")
        summary.add_row("MRR", _num(ev.mrr), "mean 1/rank of the first expected rule (relevance)")
        summary.add_row("precision", _num(ev.precision), "first returned rule expected, of messages matched")
        summary.add_row("recall", _num(ev.recall), "first returned rule expected, of labelled messages")
        summary.add_row("priority moved", str(len(changed)), "relevance top returned, but not first")
        summary.add_row("rejection", _num(ev.rejection), "no match, of messages expecting none")
        ml = ev.multi_label
        summary.add_row("multi-label P", _num(ml.precision), f"returned rules expected ({ml.true_positives} right, "
                        f"{ml.false_positives} wrong)")  # fmt: skip
        summary.add_row("multi-label R", _num(ml.recall), f"expected rules returned ({ml.false_negatives} missed)")
        summary.add_row("multi-label F1", _num(ml.f1), "harmonic mean of the two")
        summary.add_row("governs P", _num(ev.governs_precision), "matches governing (from 0.7) that are expected")
        summary.add_row("governs R", _num(ev.governs_recall), "expected rules that govern their message")
        summary.add_row("ECE", _num(ev.ece), "calibration error of the confidence (below)")
        con.print(summary)
        if ev.reliability:
            table = Table(title="reliability of the confidence (every candidate, no gate)", title_justify="left")
            for column in ("confidence", "candidates", "mean", "right"):
                table.add_column(column, justify="left" if column == "confidence" else "right", no_wrap=True)
            for b in ev.reliability:
                if b.candidates:
                    table.add_row(f"{b.low:.1f}-{b.high:.1f}", str(b.candidates), _num(b.confidence), _num(b.right))
            con.print(table)
        if ev.confusions:
            shown = ev.confusions[:_TOP]
            table = Table(title=f"top confusions ({len(shown)} of {len(ev.confusions)})", title_justify="left")
            table.add_column("expected rule")
            table.add_column("ranked first instead")
            table.add_column("messages", justify="right", no_wrap=True)
            for c in shown:
                table.add_row(escape(c.expected), escape(c.took), str(c.count))
            con.print(table)
        if changed:
            table = Table(title=f"priority changed the top rule ({len(changed)} messages)", title_justify="left")
            for column in ("line", "top by relevance", "returned first", "expected"):
                table.add_column(column, justify="right" if column == "line" else "left")
            for change in changed[:_TOP]:
                line = "-" if change["line"] is None else str(change["line"])
                table.add_row(line, escape(change["top_by_relevance"]), escape(change["returned"][0]),
                              escape(", ".join(change["expected"]) or "(none)"))  # fmt: skip
            con.print(table)
        never = ", ".join(ev.never_matched) or "none"
        con.print(escape(f"never matched at the gate ({len(ev.never_matched)}): {never}"), soft_wrap=False)
        seen = [r for r in ev.rules if r.support or r.matched]
        seen.sort(key=lambda r: (r.recall if r.recall is not None else 2.0,
                                 r.precision if r.precision is not None else 2.0, -r.support, r.rule_id))  # fmt: skip
        if seen:
            table = Table(
                title=f"worst rules at the gate ({min(_TOP, len(seen))} of {len(seen)})", title_justify="left"
            )
            table.add_column("rule")
            for column in ("support", "matched", "precision", "recall"):
                table.add_column(column, justify="right", no_wrap=True)
            for r in seen[:_TOP]:
                table.add_row(escape(r.rule_id), str(r.support), str(r.matched), _num(r.precision), _num(r.recall))
            con.print(table)

    return render


@click.command("eval")
@source_options
@click.option(
    "--messages",
    "messages_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help='Labelled messages: JSONL, {"message": ..., "expected": [rule ids]} per line.',
)
@click.option("-k", "cuts", default="1,3,5", show_default=True, callback=_cuts, metavar="K[,K...]",
              help="Cut-offs of recall@k.")  # fmt: skip
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=None,
              help="Evaluate at a similarity threshold instead of the default gate (confidence >= 0.7).")  # fmt: skip
@format_option
@click.pass_context
def eval_command(
    ctx: click.Context,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    model_dir: Path | None,
    messages_file: Path,
    cuts: tuple[int, ...],
    threshold: float | None,
    output_format: str | None,
) -> int:
    """Evaluate a rulebook on labelled messages: acc@1, recall@k, MRR, precision and recall at the gate, per rule.

    The ranking figures rank by relevance alone; the figures at the gate are what the matcher returns, priority
    included, and the messages where priority put another rule first are listed. Exit 0 when evaluated (whatever
    the figures), 2 on bad input.
    """
    fmt = resolve_format(ctx, output_format)
    labelled = load_labelled(messages_file)
    with _matcher(rules_file, tenant_id, db_url, model_dir) as (matcher, name):
        config = None if threshold is None else matcher.config.with_(threshold=threshold)
        evaluation = evaluate_rulebook(matcher, labelled, config=config, k=cuts, source=str(messages_file))
        count = len(matcher)
    changed = priority_changes(evaluation)
    payload = {"rulebook": name, "rule_count": count, **evaluation.to_dict(), "priority_changed": changed}
    emit(fmt, payload, _render_eval(name, count, evaluation, changed))
    return 0


def _render_doctor(name: str, diagnosis: Diagnosis) -> Callable[[Console], None]:
    def render(con: Console) -> None:
        con.print(escape(f"{name}: {diagnosis.rules} enabled rules"), soft_wrap=False)
        con.print(f"{diagnosis.errors} error(s), {diagnosis.warnings} warning(s)")
        con.print(escape(f"vector scan: {diagnosis.vector_scan}"), soft_wrap=True)
        if diagnosis.encoder is not None:
            con.print(escape(f"encoder: {diagnosis.encoder.describe()}"), soft_wrap=False)
        if diagnosis.findings:
            table = Table()
            table.add_column("severity", no_wrap=True)
            table.add_column("finding")
            for f in diagnosis.findings:
                table.add_row(f.severity, escape(f.message))
            con.print(table)
        counts = {kind: n for kind, n in diagnosis.counts().items() if n}
        con.print("by kind:" if counts else "nothing found")
        for kind, n in counts.items():
            con.print(f"  {kind}: {n}")

    return render


@click.command("doctor")
@source_options
@click.option("--near-duplicate", type=click.FloatRange(-1.0, 1.0), default=0.95, show_default=True,
              help="Cosine from which two rules are near duplicates.")  # fmt: skip
@format_option
@click.pass_context
def doctor_command(
    ctx: click.Context,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    model_dir: Path | None,
    near_duplicate: float,
    output_format: str | None,
) -> int:
    """Check a rulebook: misplaced examples, near-duplicate rules, too few examples, unrelated conditions.

    Exit 0 when no finding is an error (warnings allowed), 1 when one is, 2 on bad input.
    """
    fmt = resolve_format(ctx, output_format)
    with _matcher(rules_file, tenant_id, db_url, model_dir) as (matcher, name):
        diagnosis = diagnose_rulebook(matcher, near_duplicate=near_duplicate)
    emit(fmt, {"rulebook": name, **diagnosis.to_dict()}, _render_doctor(name, diagnosis))
    return 1 if diagnosis.errors else 0
