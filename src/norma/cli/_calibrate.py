"""``norma rules calibrate``: a tenant's matching gate and confidence fitted to labelled messages, stored with its
rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from norma.cli._encoder import chosen_encoder
from norma.cli._output import emit, format_option, model_dir_option, resolve_format
from norma.errors import InvalidInputError

__all__ = ["calibrate"]


def _synthesize(rules: list[Any], per_rule: int) -> tuple[list[Any], list[Any]]:
    """Positives and near misses for every rule, written by the configured LLM, with a progress bar on stderr."""
    import sys

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from norma.errors import ConfigError
    from norma.llm import URL_ENV, get_llm
    from norma.matching import synthesize_labelled

    llm = get_llm()
    if llm is None:
        raise ConfigError(
            "--synthesize needs an LLM and none is configured",
            hint=f"set {URL_ENV} and NORMA_LLM_MODEL (run `norma docs llm`), or give --messages FILE",
        )
    positives: list[Any] = []
    misses: list[Any] = []
    with Progress(
        TextColumn("writing messages"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True, disable=not sys.stderr.isatty(),
    ) as progress:  # fmt: skip
        task = progress.add_task("rules", total=len(rules))
        for rule in rules:
            one = synthesize_labelled([rule], llm=llm, per_rule=per_rule)
            positives += one.positives
            misses += one.near_misses
            progress.advance(task)
    return positives, misses


def _stored(data: dict[str, Any] | None) -> str:
    """What a tenant stores for its gate, in words."""
    if data is None:
        return "none stored (the default gate: confidence >= 0.7, shipped)"
    return f"calibrated: {data.get('score', 'similarity')} >= {data['threshold']:.4g}"


def _refit_words(refit: dict[str, Any]) -> str:
    """A stored refit in words (its ``words``, from the dict)."""
    from norma.matching import GOVERNS, Refit

    return f"refitted: {Refit.from_dict(refit).words}; a rule governs from {GOVERNS:g}"


def _render(con: Console, tenant: str, gate: dict[str, Any], previous: dict[str, Any] | None, stored: bool) -> None:
    table = Table(title=f"gate of tenant {tenant!r}" + ("" if stored else " (dry run: not stored)"), show_header=False)
    table.add_column("field", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_row("threshold", f"{gate['score']} >= {gate['threshold']:.4g}")
    if gate["kind"] == "calibrated":
        terms = gate["terms"]
        keys: tuple[str, ...] = ("target", "messages", "near_misses")
        if terms.get("target") == "balanced":
            keys += ("expecting_none", "acc_at_1", "rejection")
        keys += ("precision", "recall", "f1", "rules", "rules_version")
        refit = terms.get("confidence")
        table.add_row(
            "confidence",
            "shipped (not refitted: the messages label candidates of one kind only)"
            if refit is None
            else _refit_words(refit),
        )
    else:
        keys = ()
        table.add_row("kind", gate["kind"])
    for key in keys:
        table.add_row(key, str(gate["terms"].get(key)))
    table.add_row("before", _stored(previous))
    con.print(table)


@click.command("calibrate")
@click.option("--tenant", "tenant_id", required=True, metavar="TENANT", help="The tenant whose gate is set.")
@click.option(
    "--messages",
    "messages_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Labelled messages, JSONL: {"message": "...", "expected": ["rule-id", ...]} per line (`norma docs matching`).',
)
@click.option("--target-precision", type=click.FloatRange(0, 1, min_open=True), help="Lowest gate with this precision.")
@click.option("--target-recall", type=click.FloatRange(0, 1, min_open=True), help="Highest gate with this recall.")
@click.option("--best-f1", is_flag=True, help="The single threshold with the best F1 of every returned rule.")
@click.option(
    "--synthesize",
    type=click.IntRange(1, 20),
    default=None,
    metavar="N",
    help="Have the configured LLM write N messages per rule that it should match and N near misses it must not "
    "(`norma docs llm`); with --messages, both are used.",
)
@click.option("--dry-run", is_flag=True, help="Show the gate without storing it.")
@click.option("--clear", is_flag=True, help="Remove the tenant's calibrated gate (back to the shipped confidence).")
@click.option("--db", "db_url", envvar="NORMA_DB_URL", default=None, metavar="URL", help="The rule store.")
@model_dir_option
@format_option
@click.pass_context
def calibrate(
    ctx: click.Context,
    tenant_id: str,
    messages_file: Path | None,
    target_precision: float | None,
    target_recall: float | None,
    best_f1: bool,
    synthesize: int | None,
    dry_run: bool,
    clear: bool,
    db_url: str | None,
    model_dir: Path | None,
    output_format: str | None,
) -> int:
    """Fit the tenant's gate and confidence to labelled messages and store them with its rules.

    Every matcher of the tenant (CLI, service, every replica) then gates on it, and its confidence that a rule
    governs a message (which rules a turn check enforces) is the refitted one: the shipped logit scaled and shifted
    to fit the messages, held to the shipped one by a prior (`norma docs matching`). Without a target the gate stays
    the default one, the rules that govern the message (refitted confidence >= 0.7); a target sets a similarity
    threshold instead. Deterministic. Exit 0 on success, 2 on bad input.
    """
    from norma.matching import calibrate_gate, load_labelled, tenant_matcher
    from norma.store import open_store

    fmt = resolve_format(ctx, output_format)
    calibrating = messages_file is not None or synthesize is not None
    if int(clear) + int(calibrating) != 1:
        raise click.UsageError("give --messages FILE and/or --synthesize N to calibrate, or --clear to remove the gate")
    if (target_precision is not None) + (target_recall is not None) + best_f1 > 1:
        raise click.UsageError("give one of --target-precision, --target-recall and --best-f1")
    if (target_precision is not None or target_recall is not None or best_f1) and not calibrating:
        raise click.UsageError(
            "--target-precision / --target-recall / --best-f1 need labelled messages (--messages FILE)"
        )
    store = open_store(db_url, create=False)
    try:
        previous = store.load_gate(tenant_id)
        if clear:
            version = store.save_gate(tenant_id, None)
            emit(
                fmt,
                {"tenant": tenant_id, "gate": None, "version": version},
                lambda con: con.print(
                    f"tenant {tenant_id!r}: stored gate removed (version {version}); the shipped confidence applies"
                ),
            )
            return 0
        if not store.version(tenant_id):
            raise InvalidInputError(f"tenant {tenant_id!r} has no rules", hint="import a rulebook first")
        labelled = list(load_labelled(messages_file)) if messages_file is not None else []
        encoder = chosen_encoder(model_dir)
        matcher = tenant_matcher(store, tenant_id) if encoder is None else encoder.tenant_matcher(store, tenant_id)
        near_misses: list[Any] = []
        if synthesize is not None:
            positives, near_misses = _synthesize(list(matcher.rules), synthesize)
            labelled += positives
        gate = calibrate_gate(
            matcher,
            labelled,
            target_precision=target_precision,
            target_recall=target_recall,
            best_f1=best_f1,
            source=str(messages_file or "written messages"),
            rules_version=store.version(tenant_id),
            near_misses=near_misses,
        )
        data = gate.to_dict()
        stored_version = None if dry_run else store.save_gate(tenant_id, data)
        payload = {
            "tenant": tenant_id,
            "gate": data,
            "previous": previous,
            "stored": not dry_run,
            "version": stored_version,
        }
        emit(fmt, payload, lambda con: _render(con, tenant_id, data, previous, not dry_run))
        return 0
    finally:
        store.close()
