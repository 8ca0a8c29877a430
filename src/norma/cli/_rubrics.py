"""``norma rubric``: validate, evaluate, blend and describe rubric files (thin adapters over norma.rubrics)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table

from norma.cli._batch_run import allow_empty_option
from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, batch_output_options, engine_options
from norma.cli._lazy import SuggestingGroup
from norma.cli._llm import _client as llm_client
from norma.cli._llm import llm_options
from norma.cli._output import emit, format_option, print_table, resolve_format, wide_option

if TYPE_CHECKING:
    from norma._positions import NodePositions
    from norma.rubrics import Rubric, RubricIssue, RubricValidity

__all__ = ["rubric"]

_FILE = click.Path(path_type=Path)


@click.group("rubric", cls=SuggestingGroup)
def rubric() -> None:
    """Rubrics: weighted criteria turned into a reward (synth-ai compatible)."""


def _positions(file: str | None) -> NodePositions | None:
    """Where each field of a rubric file is written (None: no file, or a text PyYAML cannot place)."""
    from norma._positions import NodePositions

    if file is None:
        return None
    try:
        text = Path(file).read_bytes()
    except OSError:
        return None
    return NodePositions.read(text, is_json=file.lower().endswith(".json"))


def _render_checks(checks: list[RubricValidity]) -> Any:
    def table(con: Console) -> None:
        for check in checks:
            if check.valid:
                con.print(f"ok    {check.file} ({check.criteria} criteria{', strict' if check.strict else ''})")
                continue
            con.print(f"FAIL  {check.file}")
            from norma._positions import field_parts

            positions = _positions(check.file)
            for issue in check.issues:  # FILE:LINE:COL: field: message, as editors and problem matchers read it
                where = check.file
                if positions is not None:
                    line, column = positions.find(field_parts(issue.path))
                    where = f"{where}:{line}:{column}"
                con.print(f"{where}: {issue.path}: {issue.message}" if issue.path else f"{where}: {issue.message}")

    return table


@rubric.command("validate")
@click.argument("files", nargs=-1, required=True, type=_FILE, metavar="FILE...")
@click.option("--strict", is_flag=True, help="Check the strict verifier format (weights in (0, 1] summing to 1).")
@format_option
@click.pass_context
def validate(ctx: click.Context, files: tuple[Path, ...], strict: bool, output_format: str | None) -> int:
    """Validate rubric files (JSON or YAML); every file is checked and every invalid one reported.

    Exit 0 when every file is valid, 2 when one is invalid (its field paths are printed) or cannot be read or parsed
    (said on stderr, one line a file; the other files are still checked): the exit code `rubric eval` gives the
    same file, as `rules validate` does for rulebooks.
    """
    from norma.errors import NormaError
    from norma.rubrics import validate_rubric

    fmt = resolve_format(ctx, output_format)
    checks: list[RubricValidity] = []
    unreadable: list[NormaError] = []
    for file in files:
        try:
            checks.append(validate_rubric(file, strict=strict))
        except NormaError as exc:
            unreadable.append(exc)
    if unreadable and len(files) == 1:
        raise unreadable[0]  # one file: the error as every command reports it
    from norma.cli._errors import echo_errors, error_lines

    for error in unreadable:
        echo_errors(error_lines(error))
    valid = all(check.valid for check in checks)
    if checks:
        emit(fmt, {"valid": valid, "files": [check.model_dump() for check in checks]}, _render_checks(checks))
    return 2 if unreadable or not valid else 0


def _aggregator_needed() -> str:
    from norma.rubrics import aggregator_names

    return f"give --aggregator NAME, one of {', '.join(aggregator_names())}"


def _check_aggregator(rubric_file: Path) -> None:
    """A verdict (``--pass-threshold``) on a ``custom`` rubric needs ``--aggregator``: without one its reward is
    None and every verdict would be FAIL, for no reason a user could see.

    Raises:
        InvalidInputError: the rubric is ``custom`` and no aggregator was given.
    """
    from norma.errors import InvalidInputError
    from norma.rubrics import load_rubric_file

    if load_rubric_file(rubric_file).aggregation == "custom":
        raise InvalidInputError(
            "a custom rubric has no reward without an aggregator, so --pass-threshold cannot decide",
            source=str(rubric_file),
            hint=_aggregator_needed(),
        )


def _render_result(result: dict[str, Any]) -> Any:
    key = "reward"

    def table(con: Console) -> None:
        grid = Table("criterion", key, "weight", "required")
        failed = set(result.get("failed_required", []))
        for cid, row in result["per_criterion"].items():
            required = "yes (FAILED)" if cid in failed else ("yes" if row["required"] else "")
            grid.add_row(cid, f"{row[key]:.4g}", f"{row['weight']:g}", required)
        print_table(con, grid)
        value = result[key]
        shown = "None" if value is None else f"{value:.6g}"
        how = result["aggregation"] + (f" via {result['aggregator']}" if "aggregator" in result else "")
        if value is None and result["aggregation"] == "custom":
            how = f"custom, without an aggregator: {_aggregator_needed()}"
        con.print(f"{key}: {shown} ({how})")
        if "passed" in result:
            con.print(f"verdict: {'PASS' if result['passed'] else 'FAIL'}")

    return table


@rubric.command("eval")
@click.argument("rubric_file", type=_FILE, metavar="RUBRIC")
@click.option("--events", "events_file", type=_FILE, metavar="FILE", help="Events: JSON list, JSON Lines or YAML list.")
@click.option(
    "--outcome", "outcome_file", type=_FILE, metavar="FILE", help="Outcome: JSON or YAML mapping of id to value."
)
@click.option("--enforce-required", is_flag=True, help="Fail when a required criterion is below the threshold.")
@click.option(
    "--pass-threshold", type=float, default=None, metavar="X", help="Give a PASS/FAIL verdict at this reward."
)
@click.option(
    "--aggregator",
    default=None,
    metavar="NAME",
    help="Aggregator for 'custom' rubrics (min, max, geometric_mean, ...).",
)
@click.option(
    "--strict-inputs",
    is_flag=True,
    help="Exit 2 on an input id that matches no criterion, a reward that is not a number in [0, 1] or a "
    "criterion not judged (without it: a warning on stderr).",
)
@click.option("--strict", "old_strict", is_flag=True, hidden=True, help="Deprecated spelling of --strict-inputs.")
@click.option(
    "--batch",
    "batch_file",
    default=None,
    metavar="FILE",
    help="Evaluate every record of FILE ('-': stdin; JSON Lines or Parquet): an outcome or {\"events\": [...]}.",
)
@allow_empty_option("records", "evaluates nothing")
@batch_output_options("record")
@engine_options
@wide_option
@click.pass_context
def eval_(
    ctx: click.Context,
    /,
    rubric_file: Path,
    events_file: Path | None,
    outcome_file: Path | None,
    enforce_required: bool,
    pass_threshold: float | None,
    aggregator: str | None,
    strict_inputs: bool,
    old_strict: bool,
    batch_file: str | None,
    allow_empty: bool,
    output_path: Path | None,
    output_format: str | None,
    **engine: Any,
) -> int:
    """Evaluate events or an outcome (or every record of --batch FILE) against a rubric and print the reward.

    Warns on stderr about entries the evaluation skips or takes as is (ids that match no criterion, rewards that
    are not numbers or outside [0, 1], criteria not judged, which count 0); --strict-inputs makes the first of
    them an error. Exit 0, 1 when a verdict was asked for (--pass-threshold, --enforce-required) and it fails, 2
    for unreadable or (--strict-inputs) doubtful input (with --batch: a bad record, the others still evaluated, or a
    FILE with no records unless --allow-empty). A batch stopped by Ctrl-C (exit 130) or SIGTERM (exit 143) writes
    every record it evaluated (only `norma check --batch` resumes).
    """
    from norma.rubrics import evaluate_rubric_file

    if old_strict:
        click.echo(
            "norma: warning: `rubric eval --strict` is deprecated and goes in the next release: use --strict-inputs",
            err=True,
        )
        strict_inputs = True
    options = EngineOptions.pop(engine)
    given = [name for name in (events_file, outcome_file, batch_file) if name is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --events FILE, --outcome FILE and --batch FILE")
    if pass_threshold is not None and aggregator is None:
        _check_aggregator(rubric_file)
    if allow_empty and batch_file is None:
        raise click.UsageError("--allow-empty goes with --batch (it lets a batch file with no records exit 0)")
    if batch_file is not None:
        from norma.batch import RubricJob
        from norma.cli._rubric_batch import rubric_batch

        job = RubricJob.make(
            rubric_file,
            enforce_required=enforce_required,
            pass_threshold=pass_threshold,
            aggregator=aggregator,
            strict_inputs=strict_inputs,
        )
        fmt_batch = output_format if output_format == "jsonl" else resolve_format(ctx, output_format)
        return rubric_batch(
            rubric_file,
            batch_file,
            job,
            fmt=fmt_batch,
            output_path=output_path,
            options=options,
            allow_empty=allow_empty,
        )
    fmt = resolve_format(ctx, output_format)
    source = events_file if events_file is not None else outcome_file

    def warn(issue: RubricIssue) -> None:
        from norma.errors import NormaError

        # placed as an error would be: FILE:LINE: field: message for a record of a JSON Lines file
        click.echo(
            f"norma: warning: {NormaError(issue.message, source=str(source), location=issue.path or None)}", err=True
        )

    result = evaluate_rubric_file(
        rubric_file,
        events_path=events_file,
        outcome_path=outcome_file,
        enforce_required=enforce_required,
        pass_threshold=pass_threshold,
        aggregator=aggregator,
        strict_inputs=strict_inputs,
        on_issue=warn,
    )
    emit(fmt, result, _render_result(result))
    return 1 if result.get("passed") is False else 0


def _render_judged(result: dict[str, Any]) -> Any:
    def table(con: Console) -> None:
        _render_result(result)(con)
        calls = result["model_calls"]
        con.print(
            f"judged by {result['model']}: {len(result['judged'])} criteria, {calls} model call{'s' * (calls != 1)}"
        )
        for cid, verdict in result["judged"].items():
            said = "pass" if verdict["pass"] else "fail"
            spread = "" if len(verdict["votes"]) == 1 else f", votes {verdict['votes_for']}-{verdict['votes_against']}"
            con.print(f"  {cid}: {said}, score {verdict['score']:.2f}{spread}: {verdict['reason']}", markup=False)

    return table


@rubric.command("judge")
@click.argument("rubric_file", type=_FILE, metavar="RUBRIC")
@click.option("--events", "events_file", type=_FILE, metavar="FILE", help="Events: JSON list, JSON Lines or YAML list.")
@click.option("--outcome", "outcome_file", type=_FILE, metavar="FILE", help="Outcome: JSON or YAML mapping.")
@click.option("--votes", type=click.IntRange(min=1, max=9), default=1, help="Votes per judged criterion (odd).")
@click.option("--enforce-required", is_flag=True, help="Fail when a required criterion is below the threshold.")
@click.option(
    "--pass-threshold", type=float, default=None, metavar="X", help="Give a PASS/FAIL verdict at this reward."
)
@click.option("--aggregator", default=None, metavar="NAME", help="Aggregator for 'custom' rubrics.")
@click.option("--no-cache", is_flag=True, help="Ask the model again instead of reading cached votes.")
@llm_options
@format_option
@click.pass_context
def judge(
    ctx: click.Context,
    rubric_file: Path,
    events_file: Path | None,
    outcome_file: Path | None,
    votes: int,
    enforce_required: bool,
    pass_threshold: float | None,
    aggregator: str | None,
    no_cache: bool,
    url: str | None,
    model: str | None,
    kind: str | None,
    output_format: str | None,
) -> int:
    """Score the criteria the events or outcome give no reward with an LLM judge, then print the reward.

    RUBRIC is a task rubric or synth-ai's backend judge format (its 'event' criteria with --events, its 'outcome'
    criteria with --outcome). Each criterion without a reward is judged from its description on the whole input
    file; votes are cached in the user's cache folder. Exit 0, 1 when a verdict was asked for and it fails, 2 for
    unreadable input, no LLM configured ($NORMA_LLM_URL) or a reply that is not a verdict.
    """
    from norma.rubrics import judge_rubric_file
    from norma.turns import judge_of

    if (events_file is None) == (outcome_file is None):
        raise click.UsageError("give exactly one of --events FILE and --outcome FILE")
    fmt = resolve_format(ctx, output_format)
    client = llm_client(url, model, kind)
    result = judge_rubric_file(
        rubric_file,
        judge_of("none" if no_cache else "user", client),
        events_path=events_file,
        outcome_path=outcome_file,
        votes=votes,
        enforce_required=enforce_required,
        pass_threshold=pass_threshold,
        aggregator=aggregator,
    )
    emit(fmt, result, _render_judged(result))
    return 1 if result.get("passed") is False else 0


def _render_rubric(blended: Rubric) -> Any:
    def table(con: Console) -> None:
        con.print(f"version {blended.version}, aggregation {blended.aggregation}")
        if blended.goal_text:
            con.print(f"goal: {blended.goal_text}")
        grid = Table("criterion", "weight", "required", "description")
        for criterion in blended.criteria:
            grid.add_row(
                criterion.id, f"{criterion.weight:g}", "yes" if criterion.required else "", criterion.description
            )
        print_table(con, grid)

    return table


@rubric.command("blend")
@click.argument("base", type=_FILE)
@click.argument("override", type=_FILE)
@format_option
@click.pass_context
def blend(ctx: click.Context, base: Path, override: Path, output_format: str | None) -> int:
    """Blend OVERRIDE into BASE and print the merged rubric (--format json gives a loadable rubric)."""
    from norma.rubrics import blend_rubric_files

    fmt = resolve_format(ctx, output_format)
    blended = blend_rubric_files(base, override)
    emit(fmt, blended.model_dump(), _render_rubric(blended))
    return 0


@rubric.command("schema")
@click.option("--strict", is_flag=True, help="The strict verifier format instead of the flexible one.")
@format_option
@click.pass_context
def schema(ctx: click.Context, strict: bool, output_format: str | None) -> int:
    """Print the JSON Schema of the rubric format (--format json for the schema itself)."""
    from norma.rubrics import rubric_json_schema

    fmt = resolve_format(ctx, output_format)
    document = rubric_json_schema(strict=strict)

    def table(con: Console) -> None:
        con.print(f"{document['title']}: {document['description']}")
        grid = Table("field", "type", "required")
        required = set(document.get("required", []))
        for name, prop in document["properties"].items():
            kind = prop.get("type") or " | ".join(str(p.get("type", "object")) for p in prop.get("anyOf", []))
            grid.add_row(name, str(kind), "yes" if name in required else "")
        print_table(con, grid)
        con.print("Use --format json for the full schema.")

    emit(fmt, document, table)
    return 0


def _demo_section(examples: Path) -> tuple[dict[str, Any], Any]:
    from norma.rubrics import blend_rubric_files, evaluate_rubric_file, validate_rubric

    folder = examples / "rubrics"
    events = evaluate_rubric_file(
        folder / "code_review.json", events_path=folder / "inputs" / "code_review_events.json"
    )
    outcome = evaluate_rubric_file(
        folder / "code_review.json",
        outcome_path=folder / "inputs" / "code_review_outcome.json",
        enforce_required=True,
        pass_threshold=0.7,
    )
    custom = evaluate_rubric_file(
        folder / "safety_gate.yaml", outcome_path=folder / "inputs" / "safety_gate_outcome.yaml", aggregator="min"
    )
    blended = blend_rubric_files(folder / "code_review.json", folder / "code_review_override.yaml")
    strict = validate_rubric(folder / "verifier_strict.json", strict=True)
    summary = {
        "events_reward": events["reward"],
        "outcome_reward": outcome["reward"],
        "outcome_passed": outcome["passed"],
        "custom_min_reward": custom["reward"],
        "blended_criteria": [criterion.id for criterion in blended.criteria],
        "strict_valid": strict.valid,
    }

    def render(con: Console) -> None:
        con.print("code_review.json + events:")
        _render_result(events)(con)
        con.print("code_review.json + outcome, --enforce-required --pass-threshold 0.7:")
        _render_result(outcome)(con)
        con.print(f"safety_gate.yaml (custom, aggregator min): reward {custom['reward']:.4g}")
        con.print(f"blend with code_review_override.yaml: {', '.join(summary['blended_criteria'])}")
        con.print(f"verifier_strict.json strict validation: {'ok' if strict.valid else 'FAIL'}")

    return summary, render


SECTIONS["rubrics"] = _demo_section
