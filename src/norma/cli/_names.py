"""``norma names``: score MIID name variations, build validator queries, generate variations that score well."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table

from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, batch_output_options, engine_options, run_batch
from norma.cli._lazy import SuggestingGroup
from norma.cli._output import emit, format_option, print_table, resolve_format
from norma.errors import ConfigError, InvalidInputError, NormaError

if TYPE_CHECKING:
    from norma.batch import BatchRecord
    from norma.names import VariationQuery

__all__ = ["names", "names_demo"]

# norma.names' limits, spelt out so that `--help` need not import the scorer (tests/test_cli.py keeps them equal)
MAX_HASH_SEED = 4_294_967_295
MAX_HASH_SEEDS = 10_000
DEFAULT_RULE_PERCENTAGE = 30

_COMPAT = click.option(
    "--compat",
    type=click.Choice(["miid", "stable"]),
    default="miid",
    show_default=True,
    help="miid: the validator's exact score (depends on its PYTHONHASHSEED, see --hash-seed); stable: the same "
    "for every hash seed.",
)
DEFAULT_HASH_SEED = 0
"""The hash seed the commands score under unless told otherwise (printed with every result)."""
_HASH_SEED = click.option(
    "--hash-seed",
    type=click.IntRange(0, MAX_HASH_SEED),
    default=DEFAULT_HASH_SEED,
    show_default=True,
    help="The validator's PYTHONHASHSEED to score under (compat miid): the same result in every run.",
)
_LEVEL_KEYS = {"l": "Light", "light": "Light", "m": "Medium", "medium": "Medium", "f": "Far", "far": "Far"}


class HashSeeds(click.ParamType[list[int], "str | list[int]"]):
    """A list of hash seeds: ranges and comma lists, ``0-99`` or ``0,7,100-119``."""

    name = "SEEDS"

    def convert(self, value: str | list[int], param: click.Parameter | None, ctx: click.Context | None) -> list[int]:
        if isinstance(value, list):
            return value
        seeds: list[int] = []
        for item in str(value).split(","):
            low, dash, high = item.strip().partition("-")
            try:
                first, last = int(low), int(high if dash else low)
            except ValueError:
                self.fail(f"{item.strip()!r} is not a seed or a range such as 0-99", param, ctx)
            if not 0 <= first <= last <= MAX_HASH_SEED:
                self.fail(f"{item.strip()!r} is not a range of seeds from 0 to {MAX_HASH_SEED}", param, ctx)
            if len(seeds) + last - first + 1 > MAX_HASH_SEEDS:
                self.fail(f"more than {MAX_HASH_SEEDS:,} seeds", param, ctx)
            seeds.extend(range(first, last + 1))
        return list(dict.fromkeys(seeds))


@click.group("names", cls=SuggestingGroup)
def names() -> None:
    """MIID name variations: score them as the validator does, build queries, generate good ones."""


@names.command("score")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@engine_options
@_COMPAT
@_HASH_SEED
@click.option(
    "--hash-seeds",
    type=HashSeeds(),
    default=None,
    help="Score under each of these hash seeds (0-99, or 0,7,100-119) and report the mean, min and spread.",
)
@click.option("--transliterate", is_flag=True, help="Transliterate non-Latin names and variations first (unidecode).")
@batch_output_options("record", batch_form=False)
@click.pass_context
def score(
    ctx: click.Context,
    /,
    file: Path,
    compat: str,
    hash_seed: int,
    hash_seeds: list[int] | None,
    transliterate: bool,
    output_path: Path | None,
    output_format: str | None,
    **engine: Any,
) -> int:
    """Score every {name, variations, labels} record of FILE (JSON Lines, or Parquet: one record per row).

    The validator's score depends on its PYTHONHASHSEED: each record is scored under --hash-seed (0 unless told),
    or under every seed of --hash-seeds, reporting per record and for the file the mean, the minimum and the
    spread (max - min) of the final score: what one answer gets across validator restarts.

    A bad record stops the run: the results before it (if any) are written, then the command exits 2 naming its
    line.
    """
    if hash_seeds is not None and ctx.get_parameter_source("hash_seed") == click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("give --hash-seed or --hash-seeds, not both")
    from norma.batch import NamesJob, is_parquet, names_document, require_parquet, seed_spread_document

    if output_path is not None and is_parquet(output_path):
        require_parquet()  # before scoring, not after
    options = EngineOptions.pop(engine)
    fmt = output_format if output_format == "jsonl" else resolve_format(ctx, output_format)
    job = NamesJob.make(compat=compat, transliterate=transliterate, hash_seed=hash_seed, hash_seeds=hash_seeds)
    records, unreadable = _records(file)
    lines = {record.index: int(record.where.rsplit(" ", 1)[1]) for record in records}
    results: list[dict[str, Any]] = []
    failure: NormaError | None = None
    for item in run_batch(job, records, options, "scoring"):
        if item.error is not None or item.result is None:
            failure = InvalidInputError(f"bad record: {item.error}", source=str(file), location=item.where)
            break
        results.append({"line": lines[item.index], **{k: v for k, v in item.result.items() if k != "hash_seeds"}})
    failure = failure or unreadable
    if hash_seeds is None:
        payload = names_document(results, compat, hash_seed)
    else:
        payload = seed_spread_document(results, compat, _ranges(hash_seeds), len(hash_seeds))
    if results or failure is None:  # a run stopped at its first record has nothing to write
        _write(fmt, payload, output_path)
    if failure is not None:
        raise failure
    return 0


def _records(file: Path) -> tuple[list[BatchRecord], NormaError | None]:
    """The records of a JSON Lines or Parquet file as text, and the error of a line that could not be read."""
    from norma.batch import BatchRecord, is_parquet, parquet_rows

    if is_parquet(file):
        rows = parquet_rows(file)
        texts = [json.dumps(row, ensure_ascii=False) for row in rows]
        return [BatchRecord(index, f"row {index + 1}", text) for index, text in enumerate(texts)], None
    records: list[BatchRecord] = []
    try:
        from norma.names import read_lines

        for number, text in read_lines(file):
            records.append(BatchRecord(len(records), f"line {number}", text))
    except NormaError as exc:
        return records, exc
    return records, None


def _ranges(seeds: list[int]) -> str:
    """``[0, 1, 2, 7]`` -> ``"0-2,7"``."""
    parts: list[str] = []
    start = previous = seeds[0]
    for seed in [*seeds[1:], None]:
        if seed is not None and seed == previous + 1:
            previous = seed
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if seed is not None:
            start = previous = seed
    return ",".join(parts)


def _write(fmt: str, payload: dict[str, Any], output: Path | None) -> None:
    from norma.batch import is_parquet, write_rows

    if output is not None and is_parquet(output):
        write_rows(output, payload["results"])
        return
    target: Any = output.open("w", encoding="utf-8") if output else nullcontext(sys.stdout)
    with target as handle:
        if fmt == "jsonl":
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in payload["results"])
        elif fmt == "json":
            handle.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        else:
            con = Console(file=handle, highlight=False, soft_wrap=True)
            if "hash_seeds" in payload:
                _spread_table(con, payload)
            else:
                _score_table(con, payload)


def _spread_table(con: Console, payload: dict[str, Any]) -> None:
    seeds = f"{payload['seed_count']} hash seeds {payload['hash_seeds']}"
    table = Table(title=f"final score over {seeds} (compat={payload['compat']})")
    for column in ("line", "name", "mean", "min", "max", "spread"):
        table.add_column(column, justify="left" if column == "name" else "right")
    for row in payload["results"]:
        table.add_row(
            str(row["line"]),
            row["name"],
            *(f"{row[key]:.4f}" for key in ("mean", "min", "max", "spread")),
        )
    print_table(con, table)
    overall = payload["overall"]
    if overall is not None:
        con.print(
            f"{payload['records']} records; mean final score over the seeds {overall['mean']:.4f}, "
            f"min {overall['min']:.4f}, max {overall['max']:.4f}, spread {overall['spread']:.4f}"
        )


def _score_table(con: Console, payload: dict[str, Any]) -> None:
    table = Table(title=f"name variation scores (compat={payload['compat']}, hash seed {payload['hash_seed']})")
    for column in ("line", "name", "final", "base", "rules", "variations"):
        table.add_column(column, justify="left" if column == "name" else "right")
    for row in payload["results"]:
        rule = row["rule_compliance"]
        table.add_row(
            str(row["line"]),
            row["name"],
            f"{row['final']:.4f}",
            f"{row['base']:.4f}",
            "-" if rule is None else f"{rule:.4f}",
            f"{row['variations']} ({row['rule_compliant']} rule)",
        )
    print_table(con, table)
    if payload["mean_final"] is not None:
        con.print(f"{payload['records']} records, mean final score {payload['mean_final']:.4f}")


@names.command("query")
@click.option("--seed", type=int, default=None, help="Seed of the random draws (same seed, same query).")
@click.option("--name", default=None, help="Seed name to put in the query text.")
@click.option(
    "--llm",
    "use_llm",
    is_flag=True,
    help="Have the configured LLM ($NORMA_LLM_URL, $NORMA_LLM_MODEL) phrase the query; `norma docs llm`.",
)
@format_option
@click.pass_context
def query(ctx: click.Context, seed: int | None, name: str | None, use_llm: bool, output_format: str | None) -> int:
    """Draw query labels as the validator does and print them with the query text."""
    fmt = resolve_format(ctx, output_format)
    client = None
    if use_llm:
        from norma.llm import MODEL_ENV, URL_ENV, get_llm

        client = get_llm()
        if client is None:
            raise ConfigError("--llm was given but no LLM is configured", hint=f"set {URL_ENV} and {MODEL_ENV}")
    from norma.names import build_query

    built = build_query(name, seed=seed, llm=client)
    payload = {
        "labels": built.labels,
        "template": built.template,
        "text": built.text,
        "phrased_by": built.phrased_by,
    }
    emit(fmt, payload, lambda con: _query_table(con, built))
    return 0


def _query_table(con: Console, built: VariationQuery) -> None:
    labels = built.labels
    rule_based = labels["rule_based"]
    table = Table(show_header=False, title="query labels")
    table.add_row("variation_count", str(labels["variation_count"]))
    table.add_row("phonetic_similarity", json.dumps(labels["phonetic_similarity"]))
    table.add_row("orthographic_similarity", json.dumps(labels["orthographic_similarity"]))
    table.add_row("rule_percentage", f"{rule_based['rule_percentage']}%")
    table.add_row("selected_rules", ", ".join(rule_based["selected_rules"]))
    print_table(con, table)
    con.print(built.text)


def _distribution(value: str, param: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in value.split(","):
        key, sep, number = item.partition("=")
        level = _LEVEL_KEYS.get(key.strip().lower())
        if not sep or level is None:
            raise click.BadParameter(f"{item!r} is not LEVEL=SHARE with LEVEL one of L, M, F", param_hint=param)
        try:
            out[level] = float(number)
        except ValueError:
            raise click.BadParameter(f"{number!r} is not a number", param_hint=param) from None
    return out


@names.command("generate")
@click.argument("name")
@click.option("--count", type=click.IntRange(min=1), default=10, show_default=True, help="Variations requested.")
@click.option("--seed", type=int, default=None, help="Seed (same seed, same variations).")
@click.option("--rules", "rules", multiple=True, help="Rule ids, comma-separated or repeated.")
@click.option(
    "--rule-percentage",
    type=float,
    default=DEFAULT_RULE_PERCENTAGE,
    show_default=True,
    help="Percent following the rules.",
)
@click.option("--phonetic", default="L=.2,M=.6,F=.2", show_default=True, help="Phonetic level shares.")
@click.option("--orthographic", default="L=.2,M=.6,F=.2", show_default=True, help="Orthographic level shares.")
@_COMPAT
@_HASH_SEED
@format_option
@click.pass_context
def generate(
    ctx: click.Context,
    name: str,
    count: int,
    seed: int | None,
    rules: tuple[str, ...],
    rule_percentage: float,
    phonetic: str,
    orthographic: str,
    compat: str,
    hash_seed: int,
    output_format: str | None,
) -> int:
    """Generate variations of NAME built to score well, and print them with their score and the highest final score
    any variations could get for NAME and these labels (``score_upper_bound``), under --hash-seed."""
    from norma.names import (
        RULE_EVALUATORS,
        Labels,
        RuleBased,
        generate_from_labels,
        score_record,
        upper_bound_from_labels,
    )

    fmt = resolve_format(ctx, output_format)
    rule_list = [rule.strip() for item in rules for rule in item.split(",") if rule.strip()]
    unknown = [rule for rule in rule_list if rule not in RULE_EVALUATORS]
    if unknown:
        raise click.BadParameter(
            f"unknown rule {', '.join(map(repr, unknown))}; known rules: {', '.join(RULE_EVALUATORS)}",
            param_hint="--rules",
        )
    pdist = _distribution(phonetic, "--phonetic")
    odist = _distribution(orthographic, "--orthographic")
    labels = Labels(
        variation_count=count,
        phonetic_similarity=pdist,
        orthographic_similarity=odist,
        rule_based=RuleBased(selected_rules=rule_list, rule_percentage=rule_percentage),
    )
    variations = generate_from_labels(name, labels, seed=seed, compat=compat, hash_seed=hash_seed)
    scored = score_record(
        {"name": name, "variations": variations, "labels": labels}, compat=compat, hash_seed=hash_seed
    )
    bound = upper_bound_from_labels(name, labels, compat=compat, hash_seed=hash_seed)
    payload = {
        "name": name,
        "compat": compat,
        "hash_seed": hash_seed,
        "labels": labels.to_dict(),
        "variations": variations,
        "score": scored,
        "upper_bound": bound,
    }
    emit(fmt, payload, lambda con: _generate_table(con, payload))
    return 0


def _generate_table(con: Console, payload: dict[str, Any]) -> None:
    table = Table(title=f"variations of {payload['name']}")
    table.add_column("#", justify="right")
    table.add_column("variation")
    for index, variation in enumerate(payload["variations"], start=1):
        table.add_row(str(index), variation)
    print_table(con, table)
    scored = payload["score"]
    rule = scored["rule_compliance"]
    rule_text = "" if rule is None else f", rule compliance {rule:.4f}"
    con.print(
        f"final {scored['final']:.4f}, base {scored['base']:.4f}{rule_text} "
        f"(compat={payload['compat']}, hash seed {payload['hash_seed']})"
    )
    con.print(f"no variations can score above {payload['upper_bound']:.4f} for this name and these labels")


def names_demo(examples: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
    """The ``names`` section of ``norma demo``: a scored record, a query, and generated variations."""
    from norma._safety import json_lines
    from norma.names import Labels, build_query, generate_from_labels, quality_from_labels, score_record

    records_path = examples / "names" / "records.jsonl"
    first = json.loads(next(line for line in json_lines(records_path.read_text(encoding="utf-8")) if line.strip()))
    record_score = score_record(first, hash_seed=DEFAULT_HASH_SEED)
    built = build_query(first["name"], seed=7)
    labels = Labels.from_mapping(built.labels)
    variations = generate_from_labels(first["name"], labels, seed=7, hash_seed=DEFAULT_HASH_SEED)
    final, base, _ = quality_from_labels(first["name"], variations, labels, hash_seed=DEFAULT_HASH_SEED)
    summary = {
        "hash_seed": DEFAULT_HASH_SEED,
        "record": record_score,
        "query": {"labels": built.labels, "text": built.text},
        "generated": {"variations": variations, "final": final, "base": base},
    }

    def render(con: Console) -> None:
        con.print(
            f"record {first['name']!r}: {len(first['variations'])} variations score "
            f"final {record_score['final']:.4f} (base {record_score['base']:.4f})"
        )
        con.print(f"query (seed 7): {built.text}")
        con.print(f"generated for that query: {', '.join(variations)}")
        con.print(f"their score: final {final:.4f} (base {base:.4f}; hash seed {DEFAULT_HASH_SEED})")

    return summary, render


SECTIONS["names"] = names_demo
