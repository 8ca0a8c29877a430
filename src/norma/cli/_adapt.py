"""``norma rules adapt``: the encoder fine-tuned on one rulebook's own texts, written as a model folder that every
command (``--model-dir``, ``$NORMA_MODEL_DIR``) and the service (``$NORMA_MODEL_DIR``) load like the default one."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._output import emit, format_option, resolve_format
from norma.cli._rulebook_tools import source_options, source_rules
from norma.errors import InvalidInputError

__all__ = ["adapt_command"]

# checked against AdaptOptions in tests
_DEFAULTS: dict[str, Any] = {"epochs": 2, "learning_rate": 5e-5, "seed": 0, "holdout": 0.3}


def _render(name: str, out: Path, report: dict[str, Any]) -> Any:
    def render(con: Console) -> None:
        table = Table(title=f"encoder adapted to {escape(name)}", show_header=False, title_justify="left")
        table.add_column("field", no_wrap=True)
        table.add_column("value", overflow="fold")
        table.add_row("folder", escape(str(out)))
        table.add_row("base model", escape(report["base_model_id"]))
        table.add_row("rules / texts", f"{report['groups']} / {report['texts']}")
        table.add_row("pairs / steps", f"{report['pairs']} / {report['steps']}")
        table.add_row("loss", f"{report['first_loss']:.3f} -> {report['last_loss']:.3f}")
        options = report["options"]
        table.add_row("options", f"{options['epochs']} epoch(s), learning rate {options['learning_rate']:g}, "
                      f"seed {options['seed']}")  # fmt: skip
        if report["held_out_probes"]:
            table.add_row(
                "held out",
                f"{report['held_out_probes']} examples (median similarity {report['held_out_median']:.3f}): the "
                "confidence's statistics of the matchers that embed with this encoder",
            )
        else:
            table.add_row(
                "held out", "none (too few examples to hold out, or --holdout 0): statistics from the trained texts"
            )
        table.add_row("time", f"{report['seconds']:.1f} s")
        con.print(table)
        quoted = shlex.quote(str(out))
        con.print(f"use it: norma match --model-dir {escape(quoted)} ...")
        con.print(f"    or: NORMA_MODEL_DIR={escape(quoted)} norma serve")
        con.print(f"check it: norma rules eval --model-dir {escape(quoted)} --messages labelled.jsonl ...")
        con.print(f"calibrate its gate from labelled messages: norma rules calibrate --model-dir {escape(quoted)} ...")

    return render


@click.command("adapt")
@source_options
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    required=True,
    help="The folder to write the adapted encoder to (new, empty, or an earlier adapted encoder's: replaced).",
)
@click.option("--epochs", type=click.IntRange(1, 50), default=_DEFAULTS["epochs"], show_default=True,
              help="Passes over the rulebook's texts.")  # fmt: skip
@click.option("--learning-rate", type=click.FloatRange(1e-7, 1e-2), default=_DEFAULTS["learning_rate"],
              show_default=True, help="AdamW learning rate (10 % warm-up, then linear decay).")  # fmt: skip
@click.option("--seed", type=int, default=_DEFAULTS["seed"], show_default=True,
              help="Seed of the pairs, batches and dropout: the same seed gives the same encoder.")  # fmt: skip
@click.option("--holdout", "--gate-holdout", "holdout", type=click.FloatRange(0.0, 0.9),
              default=_DEFAULTS["holdout"], show_default=True,
              help="Share of each rule's examples held out of a first run, on which the confidence's statistics are "
              "measured (0: none, half the time; --gate-holdout: its former name).")  # fmt: skip
@format_option
@click.pass_context
def adapt_command(
    ctx: click.Context,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    model_dir: Path | None,
    out_dir: Path,
    epochs: int,
    learning_rate: float,
    seed: int,
    holdout: float,
    output_format: str | None,
) -> int:
    """Fine-tune the encoder on a rulebook's own texts (conditions and examples) and write it to --out.

    Ranking improves most on rulebooks whose rules have several examples (BANKING77, 10 examples per rule: acc@1
    0.85 -> 0.86 without a gate, docs/benchmarks.md; check yours with norma rules eval). Needs torch (pip install
    'norma-rules[adapt]'); about 3 minutes for a 150-rule, 10-example rulebook on 2 cores. It trains twice: first
    without 30 % of the examples, whose similarities give the confidence of the matchers using this encoder its
    rulebook statistics (cross-fitted; --holdout 0 skips it), then on every text. With labelled messages, calibrating
    is better still (norma rules calibrate --model-dir DIR). --model-dir is the encoder to start from. Exit 0 when
    written, 2 on bad input.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from norma.embeddings import AdaptOptions, adapt_encoder
    from norma.rules import rule_texts

    fmt = resolve_format(ctx, output_format)
    rules, name = source_rules(rules_file, tenant_id, db_url)
    groups = [rule_texts(rule) for rule in rules if rule.enabled]
    if not groups:
        raise InvalidInputError(f"{name} has no enabled rule", hint="enable some rules first")
    options = AdaptOptions(epochs=epochs, learning_rate=learning_rate, seed=seed, holdout=holdout)
    with Progress(
        TextColumn("adapting the encoder"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True, disable=not sys.stderr.isatty(),
    ) as progress:  # fmt: skip
        task = progress.add_task("steps", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        base = model_dir.resolve() if model_dir is not None else None
        report = adapt_encoder(groups, out_dir, options=options, model_dir=base, progress=advance, label=name).to_dict()
    payload = {"rulebook": name, **report}
    emit(fmt, payload, _render(name, out_dir, report))
    return 0
