"""``norma match``: the rules of a file that apply to a message, with the score breakdown; the matching demo."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, engine_options
from norma.cli._output import emit, resolve_format
from norma.matching import MatchConfig, MatchResult, RuleMatcher, SessionState, load_rules

__all__ = ["match"]


def _render(con: Console, message: str, result: MatchResult, explain: bool) -> None:
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
                m.rule.id,
                f"{m.final_score:.3f}",
                f"{m.similarity_score:.3f}",
                f"{m.bm25_score:.3f}",
                f"{e.hybrid:.3f}",
                f"{e.priority_normalized:.2f}",
                f"{e.scope_weight:.2f}",
                label,
            )
        con.print(table)
    if explain and result.dropped:
        dropped = Table("dropped rule", "reason", "similarity", "detail", title="left out")
        for d in result.dropped:
            dropped.add_row(d.rule_id, d.reason, f"{d.similarity:.3f}", d.detail)
        con.print(dropped)


@click.command()
@click.argument("message", required=False)
@click.option(
    "--rules",
    "rules_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="A YAML or JSON file: a list of rules, or a mapping with a 'rules' list.",
)
@click.option("--scenario", default=None, help="The active scenario (SCENARIO rules of it become candidates).")
@click.option("--step", default=None, help="The active step (STEP rules of it become candidates).")
@click.option("--turn", type=click.IntRange(min=0), default=0, show_default=True, help="The current turn.")
@click.option("--fired", multiple=True, help="RULE_ID[:COUNT[:LAST_TURN]] already fired this session (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only rules with one of these tags (repeatable).")
@click.option("--threshold", type=float, default=None, help="Override the match threshold.")
@click.option("--adr", is_flag=True, help="Use ADR-002's formula exactly (MatchConfig.adr()).")
@click.option("--explain", is_flag=True, help="Also list the rules left out and why.")
@click.option(
    "--batch",
    "batch_file",
    default=None,
    metavar="FILE",
    help="Match every message of FILE ('-': stdin; MESSAGE '-' too): JSON Lines or one message per line.",
)
@click.option(
    "--output",
    "output_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="With --batch: write the results here (a .parquet file: one row per message).",
)
@engine_options
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "jsonl"]),
    default=None,
    help="A human table (default), JSON, or (with --batch) JSON Lines.",
)
@click.pass_context
def match(
    ctx: click.Context,
    /,
    message: str | None,
    rules_file: Path,
    scenario: str | None,
    step: str | None,
    turn: int,
    fired: tuple[str, ...],
    tags: tuple[str, ...],
    threshold: float | None,
    adr: bool,
    explain: bool,
    batch_file: str | None,
    output_path: Path | None,
    output_format: str | None,
    **engine: Any,
) -> int:
    """Match MESSAGE against the rules of a file and print the matches with their score breakdown; with --batch
    FILE (or MESSAGE '-'), every message of FILE, on --engine.

    Exit 0 when at least one rule matches (a message of the batch), 1 when none does, 2 on bad input.
    """
    fmt = output_format if output_format == "jsonl" else resolve_format(ctx, output_format)
    config = MatchConfig.adr() if adr else MatchConfig()
    if threshold is not None:
        config = config.with_(threshold=threshold)
    options = EngineOptions.pop(engine)
    if message == "-" and batch_file is None:
        batch_file = "-"
    elif (message is None) == (batch_file is None):
        raise click.UsageError("give a MESSAGE or --batch FILE, not both and not neither")
    if batch_file is not None:
        from norma.cli._match_batch import match_batch

        if scenario or step or fired or turn:
            raise click.UsageError("with --batch, give each message's session in its JSON Lines record")
        return match_batch(
            batch_file, rules_file, config, explain=explain, tags=tags, fmt=fmt, output_path=output_path,
            options=options,
        )  # fmt: skip
    assert message is not None
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
    matcher = RuleMatcher(load_rules(rules_file), config)
    result = matcher.match(message, session, explain=explain, tags=list(tags) if tags else None)
    payload: dict[str, Any] = {"message": message, "rules": len(matcher), **result.to_dict()}
    if not explain:
        payload.pop("dropped")
    emit("json" if fmt != "table" else "table", payload, lambda con: _render(con, message, result, explain))
    return 0 if result else 1


def _demo_section(examples: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
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
        con.print(table)

    return summary, render


SECTIONS["matching"] = _demo_section
