"""``norma match``: the rules of a file or of a stored tenant that apply to a message, with the score breakdown;
the matching demo.

A rulebook file is compiled once by the library (``norma.matching._snapshot.file_matcher``: its rules, their vectors
and the confidence's statistics kept as one snapshot in the user's cache folder), so the second run on an unchanged file
parses, embeds and measures nothing; messages are never written to it. ``--tenant`` uses the vectors the store
keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._batch_run import allow_empty_option
from norma.cli._demo import SECTIONS
from norma.cli._encoder import chosen_encoder
from norma.cli._engine import EngineOptions, batch_output_options, engine_options
from norma.cli._output import (
    check_rules_source,
    emit,
    model_dir_option,
    print_table,
    resolve_format,
    rules_source_options,
    wide_option,
)

if TYPE_CHECKING:
    from norma.cli._encoder import Encoder
    from norma.matching import MatchConfig, MatchResult, RuleMatcher

__all__ = ["match"]

_ENFORCEMENT_LABEL = {"governs": "governs", "neighbour": "neighbour"}
"""Under each match's id: whether it governs the turn (``Enforcement.reason``; ``--explain`` prints the detail)."""


def _render(con: Console, message: str, result: MatchResult, explain: bool) -> None:
    from norma.matching import GOVERNS

    if not result:
        con.print(f"no rule matches {message!r}")
    else:
        width = max(len(m.rule.id) for m in result)
        w = result[0].explanation.weights
        table = Table(
            title=f"final = {w['hybrid']} x hybrid + {w['priority']} x prio + {w['scope']} x scope; "
            f"hybrid = {w['vector']} x sim + {w['bm25']} x bm25"
        )
        table.add_column("rule", no_wrap=True, min_width=min(width, 40))
        for name in ("final", "sim", "bm25", "hybrid", "prio", "scope"):
            table.add_column(name, no_wrap=True, justify="right")
        table.add_column("matched text")
        for m in result:
            e = m.explanation
            label = e.matched_text if e.matched_example is None else f"ex.{e.matched_example}: {e.matched_text}"
            table.add_row(
                f"{escape(m.rule.id)}\n[dim]{_ENFORCEMENT_LABEL[m.enforcement.reason]} {m.confidence:.2f}[/]",
                f"{m.final_score:.3f}",
                f"{m.similarity_score:.3f}",
                f"{m.bm25_score:.3f}",
                f"{e.hybrid:.3f}",
                f"{e.priority_normalized:.2f}",
                f"{e.scope_weight:.2f}",
                label,
            )
        print_table(con, table)
        if explain:
            con.print(f"governs the turn (a turn check applies its requirements) from a confidence of {GOVERNS:g}:")
            for m in result:
                how = "enforced" if m.enforced else "not enforced"
                con.print(f"  {m.rule.id}: {how} ({m.enforcement.reason.value}): {m.enforcement.detail}", markup=False)
    if result.gate is not None:
        con.print(f"gate ({result.gate.kind}): {result.gate.description}")
    if explain and result.dropped:
        dropped = Table("dropped rule", "reason", "similarity", "detail", title="left out")
        for d in result.dropped:
            dropped.add_row(d.rule_id, d.reason, f"{d.similarity:.3f}", d.detail)
        print_table(con, dropped)


@click.command()
@click.argument("message", required=False)
@rules_source_options(
    rules_help="A YAML or JSON file: a list of rules, or a mapping with a 'rules' list.",
    tenant_help="Match a stored tenant's rules instead.",
)
@click.option("--scenario", default=None, help="The active scenario (SCENARIO rules of it become candidates).")
@click.option("--step", default=None, help="The active step (STEP rules of it become candidates).")
@click.option("--turn", type=click.IntRange(min=0), default=0, show_default=True, help="The current turn.")
@click.option("--fired", multiple=True, help="RULE_ID[:COUNT[:LAST_TURN]] already fired this session (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only rules with one of these tags (repeatable).")
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="A similarity threshold instead of the default gate (the rules that govern the message: confidence >= 0.7).",
)
@click.option("--adr", is_flag=True, help="Use ADR-002's formula exactly (MatchConfig.adr()).")
@click.option("--explain", is_flag=True, help="Also list the rules left out and why.")
@click.option(
    "--batch",
    "batch_file",
    default=None,
    metavar="FILE",
    help="Match every message of FILE ('-': stdin; MESSAGE '-' too): JSON Lines or one message per line.",
)
@allow_empty_option("messages", "matches nothing")
@model_dir_option
@batch_output_options("message")
@engine_options
@wide_option
@click.pass_context
def match(
    ctx: click.Context,
    /,
    message: str | None,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    scenario: str | None,
    step: str | None,
    turn: int,
    fired: tuple[str, ...],
    tags: tuple[str, ...],
    threshold: float | None,
    adr: bool,
    explain: bool,
    batch_file: str | None,
    allow_empty: bool,
    model_dir: Path | None,
    output_path: Path | None,
    output_format: str | None,
    **engine: Any,
) -> int:
    """Match MESSAGE (or every message of --batch FILE) against a rulebook and print the scored matches.

    The rules are those of --rules FILE (their vectors cached in the user's cache folder, see docs/cli.md) or of
    the stored --tenant TENANT (its stored vectors). Exit 0 when at least one rule matches (a message of the
    batch), 1 when none does, 2 on bad input (with --batch: a bad record, the others still matched, or a FILE with
    no messages unless --allow-empty). A batch stopped by Ctrl-C (exit 130) or SIGTERM (exit 143) writes every
    message it matched (only `norma check --batch` resumes).
    """
    from norma.matching import MatchConfig, SessionState

    check_rules_source(rules_file, tenant_id, db_url)
    fmt = output_format if output_format == "jsonl" else resolve_format(ctx, output_format)
    config = MatchConfig.adr() if adr else MatchConfig()
    if threshold is not None:
        config = config.with_(threshold=threshold)
    options = EngineOptions.pop(engine)
    if message == "-" and batch_file is None:
        batch_file = "-"
    elif (message is None) == (batch_file is None):
        raise click.UsageError("give a MESSAGE or --batch FILE, not both and not neither")
    if allow_empty and batch_file is None:
        raise click.UsageError("--allow-empty goes with --batch (it lets a batch file with no messages exit 0)")
    if batch_file is not None:
        from norma.batch import MatchJob
        from norma.cli._match_batch import match_batch

        if scenario or step or fired or turn:
            raise click.UsageError("with --batch, give each message's session in its JSON Lines record")
        folder = str(model_dir.resolve()) if model_dir is not None else None  # each worker loads it
        if tenant_id is not None:
            job = MatchJob.for_tenant(tenant_id, db_url, config, explain=explain, tags=tags, model_dir=folder)
        else:
            assert rules_file is not None
            job = MatchJob.make(rules_file, config, explain=explain, tags=tags, model_dir=folder)
        return match_batch(batch_file, job, fmt=fmt, output_path=output_path, options=options, allow_empty=allow_empty)
    assert message is not None
    _check_message(message)
    counts: dict[str, int] = {}
    last: dict[str, int] = {}
    for item in fired:
        parts = item.split(":")
        if len(parts) > 3 or not parts[0] or not all(p.isdigit() for p in parts[1:]):
            raise click.BadParameter(f"{item!r} is not RULE_ID[:COUNT[:LAST_TURN]]", param_hint="--fired")
        counts[parts[0]] = int(parts[1]) if len(parts) > 1 else 1
        last[parts[0]] = int(parts[2]) if len(parts) > 2 else turn
    session = SessionState(
        active_scenario_id=scenario, active_step_id=step, turn=turn, fire_counts=counts, last_fired_turn=last
    )
    if tenant_id is not None:
        result, count = _match_tenant(tenant_id, db_url, config, message, session, explain, tags, model_dir)
    else:
        assert rules_file is not None
        encoder = chosen_encoder(model_dir)
        matcher = _file_matcher(rules_file, config, encoder)
        result = _match_one(matcher, message, session, explain, tags, encoder)
        count = len(matcher)
    payload: dict[str, Any] = {"message": message, "rules": count, **result.to_dict()}
    if tenant_id is not None:
        payload["tenant"] = tenant_id
    if not explain:
        payload.pop("dropped")
    emit("json" if fmt != "table" else "table", payload, lambda con: _render(con, message, result, explain))
    return 0 if result else 1


def _check_message(message: str) -> None:
    """A usage error for a message with nothing to match."""
    if not message.strip():
        raise click.UsageError("MESSAGE is empty: give the text to match, such as norma match --rules FILE 'hello'")


def _file_matcher(rules_file: Path, config: MatchConfig, encoder: Encoder | None) -> RuleMatcher:
    """The file's rules in a matcher, compiled once and kept by the library (one snapshot per file and encoder, see
    ``norma.matching._snapshot``)."""
    from norma.matching import file_matcher

    if encoder is None:
        return file_matcher(rules_file, config)
    return file_matcher(rules_file, config, **encoder.matcher_options())


def _match_one(
    matcher: RuleMatcher, message: str, session: Any, explain: bool, tags: tuple[str, ...], encoder: Encoder | None
) -> MatchResult:
    """One message matched; it is embedded by the plain embedder, so messages never reach the cache on disk."""
    from norma.embeddings import get_embedder

    embedder = encoder.embedder if encoder is not None else get_embedder()
    return matcher.match(message, session, explain=explain, tags=list(tags) if tags else None, embedder=embedder)


def _match_tenant(
    tenant_id: str,
    db_url: str | None,
    config: MatchConfig,
    message: str,
    session: Any,
    explain: bool,
    tags: tuple[str, ...],
    model_dir: Path | None,
) -> tuple[MatchResult, int]:
    """One message matched against a stored tenant (its stored vectors; the store must exist and have the tenant)."""
    from norma.matching import tenant_matcher
    from norma.store import open_tenant_store

    with open_tenant_store(tenant_id, db_url) as store:
        encoder = chosen_encoder(model_dir)
        if encoder is None:
            matcher = tenant_matcher(store, tenant_id, config=config)
        else:
            matcher = encoder.tenant_matcher(store, tenant_id, config)
        return _match_one(matcher, message, session, explain, tags, encoder), len(matcher)


def _demo_section(examples: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
    from norma.matching import RuleMatcher, SessionState, load_rules

    path = examples / "matching" / "support_rules.yaml"
    matcher = RuleMatcher(load_rules(path))
    messages = [
        ("I want my money back for this order", None),
        ("someone stole my card yesterday", None),
        ("what is the weather like on mars?", None),
        ("the package never arrived", SessionState(active_scenario_id="delivery")),
    ]
    results = matcher.match_many([m for m, _ in messages], [s for _, s in messages])
    found_rules: list[dict[str, Any]] = [
        {
            "message": text,
            "scenario": session.active_scenario_id if session else None,
            "rules": [{"id": m.rule.id, "final_score": round(m.final_score, 4)} for m in result],
        }
        for (text, session), result in zip(messages, results, strict=True)
    ]
    summary = {"rules": len(matcher), "matches": found_rules}

    def render(con: Console) -> None:
        con.print(f"{len(matcher)} rules from {path.name}; best match per message (final score):")
        table = Table("message", "scenario", "matched rules")
        for item in found_rules:
            found = ", ".join(f"{r['id']} ({r['final_score']:.3f})" for r in item["rules"]) or "none"
            table.add_row(str(item["message"]), str(item["scenario"] or "-"), found)
        print_table(con, table)

    return summary, render


SECTIONS["matching"] = _demo_section
