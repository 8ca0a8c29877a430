"""``norma audit``: audit AI outputs against the IR.x.y rules (thin adapters over norma.audit and norma.reports).

``audit`` is a group whose default command is ``run``: ``norma audit REQUEST.json ...`` is
``norma audit run REQUEST.json ...``; ``schema``, ``rules`` and ``bump`` are its other commands (a request file
literally named like one of them is given as ``./schema``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click
from rich.console import Console
from rich.table import Table

from norma.cli._batch_run import allow_empty_option
from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, engine_options
from norma.cli._output import (
    console,
    emit,
    fail_on_option,
    format_option,
    print_table,
    report_option,
    resolve_format,
    write_text,
)

if TYPE_CHECKING:
    from norma.audit import AuditConfig, AuditReport, Lang

__all__ = ["audit"]

REPORT_FORMATS = ("table", "json", "sarif", "junit", "markdown")


class _DefaultGroup(click.Group):
    """A group that runs ``run`` when the first argument is not one of its commands."""

    default_command = "run"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            self._refuse_a_mistyped_command(ctx, args[0])
            args = [self.default_command, *args]
        elif not args:
            args = [self.default_command]
        return super().parse_args(ctx, args)

    def _refuse_a_mistyped_command(self, ctx: click.Context, word: str) -> None:
        """``norma audit shema``: a word that is no file but close to a command is a typo, not a request file."""
        import difflib
        import os

        from norma.cli._lazy import unknown_command

        if word == "-" or word.startswith("-") or os.path.exists(word):
            return
        if difflib.get_close_matches(word, list(self.commands), n=1, cutoff=0.6):
            raise click.UsageError(unknown_command(word, sorted(self.commands), ctx.command_path), ctx)


@click.group("audit", cls=_DefaultGroup)
def audit() -> None:
    """Audit AI outputs against executable rules IR.x.y: PASS, FAIL or SKIP.

    `norma audit REQUEST.json --docs DIR` runs an audit (the `run` command); `norma audit schema` prints the
    request's JSON Schema; `norma audit rules` lists the rules. Exit 0 PASS or SKIP, 1 FAIL, 2 invalid input.
    """


def _config(
    config_file: Path | None, no_embeddings: bool, overrides: dict[str, Any], lang: str | None = None
) -> AuditConfig:
    from norma.audit import AuditConfig, load_config

    base = load_config(config_file) if config_file is not None else AuditConfig()
    update = {k: v for k, v in overrides.items() if v is not None}
    if no_embeddings:
        update["embeddings"] = False
    if lang is not None:
        update["lang"] = None if lang == "auto" else lang
    if not update:
        return base
    return AuditConfig.parse({**base.model_dump(mode="json"), **update}, source="command line")


def _llm() -> Any:
    try:
        from norma.llm import get_llm
    except ImportError:  # pragma: no cover - norma.llm ships with norma
        return None
    return get_llm()


def _emit(fmt: str, items: list[tuple[str, AuditReport]], fail_on: str) -> None:
    from norma.reports import render, render_table

    if fmt == "table":
        render_table(console(), items)
    else:
        sys.stdout.write(render(fmt, items, fail_on))


def _add_threshold_options(command: click.Command) -> None:
    """Add ``--ir-…`` threshold options, one per field of AuditConfig, to ``run`` when its parameters are first
    needed (not at import, so that `norma audit --help` does not import the audit package)."""
    from norma.audit import AuditConfig

    known = {param.name for param in command.params}
    for name, field in AuditConfig.model_fields.items():
        if not name.startswith("ir_") or name in known:
            continue
        kind: Any = click.Choice(["low", "medium", "high"]) if "tolerance" in name else float
        command.params.append(
            click.Option(
                ["--" + name.replace("_", "-"), name],
                type=kind,
                default=None,
                help=f"{(field.description or '').rstrip('.')} (default {field.default}).",
            )
        )


class _RunCommand(click.Command):
    """``run``, whose threshold options are made when its parameters are first needed (parsing, help, completion)."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        _add_threshold_options(self)
        return super().get_params(ctx)


def _batch_sources(batch_file: str | None, requests: tuple[str, ...]) -> list[str] | None:
    """The files of a batch: --batch's and every positional file, or None for one plain request (the single form)."""
    if batch_file is None and len(requests) == 1 and not requests[0].endswith(".jsonl"):
        return None
    return ([batch_file] if batch_file is not None else []) + list(requests)


def _read_sources(sources: list[str], batch_file: str | None, config: AuditConfig) -> list[Any]:
    """The batch's records: each line of --batch and of a positional ``.jsonl`` file, each other positional file as
    one request; named ``file:line``, or the file's name."""
    from norma.audit import read_request, read_requests
    from norma.batch import BatchRecord
    from norma.errors import NormaError

    stdin = getattr(sys.stdin, "buffer", sys.stdin)  # bytes: the readers bound lines and files in bytes
    named: list[tuple[str, Any]] = []
    for position, source in enumerate(sources):
        stream = stdin if source == "-" else source
        if (position == 0 and batch_file is not None) or source.endswith(".jsonl"):
            named.extend(read_requests(stream, limits=config.limits))
            continue
        try:
            named.append((source, read_request(stream, limits=config.limits)))
        except NormaError as exc:
            named.append((source, exc))
    return [
        BatchRecord(index, where, record if isinstance(record, NormaError) else [where, record])
        for index, (where, record) in enumerate(named)
    ]


@audit.command("run", cls=_RunCommand)
@click.argument("requests", nargs=-1, metavar="REQUEST.json...")
@click.option("--docs", "docs", type=click.Path(path_type=Path), default=None, help="Folder of normative documents.")
@click.option("--config", "config_file", type=click.Path(path_type=Path), default=None, help="Thresholds JSON file.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(REPORT_FORMATS),
    default=None,
    help="table (default), json, sarif, junit or markdown.",
)
@report_option
@fail_on_option("Exit 1 on FAIL (error) or also on any WARNING (warning).")
@click.option(
    "--batch", "batch_file", type=str, default=None, metavar="FILE.jsonl", help="Audit every line ('-': stdin)."
)
@allow_empty_option("requests", "audits nothing")
@engine_options
@click.option("--no-embeddings", is_flag=True, help="Skip the embedding checks (reported as not evaluated).")
@click.option(
    "--lang",
    type=click.Choice(["auto", "en", "es"]),
    default=None,
    help="Language of titles and messages (default: the config's 'lang', else the language of the request's input).",
)
@click.pass_context
def run(
    ctx: click.Context,
    /,
    requests: tuple[str, ...],
    docs: Path | None,
    config_file: Path | None,
    output_format: str | None,
    reports_to_write: list[tuple[str, Path]],
    fail_on: str,
    batch_file: str | None,
    allow_empty: bool,
    no_embeddings: bool,
    lang: str | None,
    **thresholds: Any,
) -> int:
    """Audit REQUEST.json ('-': stdin), or every line of --batch FILE.jsonl, against the documents in --docs.

    Several files (or a `.jsonl` one) are a batch: each line of a `.jsonl` file is a request, each other file one
    request; with --batch, the files given besides it join the batch. Exit 0 when every audit is PASS or SKIP, 1 on
    FAIL (--fail-on warning: also on a WARNING), 2 on invalid input (bad JSON, missing fields, unknown context_type,
    missing document; a batch with no requests unless --allow-empty). A batch stopped by Ctrl-C (exit 130) or SIGTERM
    (exit 143) reports every request it audited, marked incomplete (only `norma check --batch` resumes).
    """
    from norma.audit import analyze, load_documents, read_request
    from norma.reports import exit_code

    fmt = output_format or resolve_format(ctx, None)
    options = EngineOptions.pop(thresholds)
    if not requests and batch_file is None:
        raise click.UsageError("give a REQUEST.json (or '-') or --batch FILE.jsonl")
    if [batch_file, *requests].count("-") > 1:
        raise click.UsageError("stdin ('-') can be read once only")
    config = _config(config_file, no_embeddings, thresholds, lang)
    sources = _batch_sources(batch_file, requests)
    if allow_empty and sources is None:
        raise click.UsageError("--allow-empty goes with --batch (it lets a batch file with no requests exit 0)")
    if sources is None:
        request = requests[0]
        stdin = getattr(sys.stdin, "buffer", sys.stdin)
        documents = load_documents(docs, limits=config.limits, norms=config.norms) if docs is not None else None
        data = read_request(stdin if request == "-" else request, limits=config.limits)
        report = analyze(data, documents, config, llm=_llm())
        items = [("<stdin>" if request == "-" else request, report)]
        _emit(fmt, items, fail_on)
        _write_reports(reports_to_write, items, fail_on)
        return exit_code([report], fail_on)
    from norma.batch import AuditJob
    from norma.cli._audit_batch import audit_batch

    records = _read_sources(sources, batch_file, config)
    job = AuditJob.make(docs, config)
    return audit_batch(
        records,
        sources,
        job,
        fmt=fmt,
        fail_on=fail_on,
        reports_to_write=reports_to_write,
        options=options,
        allow_empty=allow_empty,
    )


def _write_reports(
    targets: list[tuple[str, Path]],
    items: list[tuple[str, AuditReport]],
    fail_on: str,
    bad: list[tuple[str, str]] | None = None,
) -> None:
    """Each ``--report FORMAT=FILE``; ``bad`` (a batch's records not audited) goes into junit and markdown."""
    from norma.reports import render

    for fmt, path in targets:
        write_text(render(fmt, items, fail_on, bad or ()), path, f"the {fmt} report")


@audit.command("schema")
@click.option(
    "--of", "which", type=click.Choice(["request", "report", "config"]), default="request", show_default=True,
    help="Which model's schema.",
)  # fmt: skip
@format_option
@click.pass_context
def schema(ctx: click.Context, which: str, output_format: str | None) -> int:
    """Print the JSON Schema of the audit request (or --of report / config); --format json for the schema itself."""
    from pydantic import BaseModel

    from norma.audit import AuditConfig, AuditReport, AuditRequest

    fmt = resolve_format(ctx, output_format)
    models: dict[str, type[BaseModel]] = {"request": AuditRequest, "report": AuditReport, "config": AuditConfig}
    document = models[which].model_json_schema()

    def table(con: Console) -> None:
        grid = Table("field", "type", "required", "description")
        required = set(document.get("required", []))
        for name, prop in document["properties"].items():
            kind = prop.get("type") or " | ".join(
                str(p.get("type", p.get("$ref", "object"))) for p in prop.get("anyOf", [])
            )
            grid.add_row(
                name, str(kind or prop.get("$ref", "")), "yes" if name in required else "", prop.get("description", "")
            )
        print_table(con, grid)
        con.print("Use --format json for the full schema.")

    emit(fmt, document, table)
    return 0


@audit.command("rules")
@click.option("--config", "config_file", type=click.Path(path_type=Path), default=None, help="Thresholds JSON file.")
@click.option(
    "--lang",
    type=click.Choice(["en", "es"]),
    default=None,
    help="Language of the rules' titles, conditions, detections and exceptions (default: the config's 'lang', "
    "else English).",
)
@format_option
@click.pass_context
def rules(ctx: click.Context, config_file: Path | None, lang: str | None, output_format: str | None) -> int:
    """List the registered rules (built-in and plugins); --format json gives a snapshot `norma audit bump` reads."""
    from norma.audit import AuditConfig, load_config, rule_registry, ruleset_snapshot

    fmt = resolve_format(ctx, output_format)
    config = load_config(config_file) if config_file is not None else AuditConfig()
    snapshot = ruleset_snapshot(list(rule_registry().values()), config, lang=cast("Lang | None", lang))

    def table(con: Console) -> None:
        grid = Table("rule", "severity", "version", "contexts", "title", "thresholds")
        grid.columns[0].no_wrap = True
        for rule_id, entry in snapshot["rules"].items():
            thresholds = ", ".join(f"{k}={v}" for k, v in entry["thresholds"].items())
            grid.add_row(
                rule_id, entry["severity"], entry["version"], ", ".join(entry["contexts"]), entry["title"], thresholds
            )
        print_table(con, grid)
        con.print(f"rule set {snapshot['ruleset_version']}; {len(snapshot['rules'])} rules")

    emit(fmt, snapshot, table)
    return 0


@audit.command("bump")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@format_option
@click.pass_context
def bump(ctx: click.Context, old: Path, new: Path, output_format: str | None) -> int:
    """Which version bump (§9.02) going from rule-set snapshot OLD to NEW needs (snapshots: `rules --format json`)."""
    from norma._safety import load_json
    from norma.audit import required_bump

    fmt = resolve_format(ctx, output_format)
    report = required_bump(load_json(old.read_bytes(), source=str(old)), load_json(new.read_bytes(), source=str(new)))

    def table(con: Console) -> None:
        con.print(f"required bump: {report.bump}")
        for reason in report.reasons:
            con.print(f"  {reason}")

    emit(fmt, report.to_dict(), table)
    return 0


def _demo_section(examples: Path) -> tuple[dict[str, Any], Any]:
    from norma.audit import AuditConfig, analyze, load_documents, verdict_label
    from norma.reports import render_table

    folder = examples / "audit"
    documents = load_documents(folder / "docs")
    config = AuditConfig(embeddings=False, lang="en")  # the NetShaper requests are Spanish; the demo speaks English
    items = []
    for name in ("pass_referenced_policy.json", "fail_no_references.json", "skip_greeting.json"):
        request = json.loads((folder / "cases" / name).read_text(encoding="utf-8"))["request"]
        items.append((name, analyze(request, documents, config)))
    summary = {name: verdict_label(report.result) for name, report in items}

    def render_demo(con: Console) -> None:
        con.print(
            "examples/audit/cases (deterministic rules; `norma audit` adds the embedding checks; reported in English,"
            " `norma audit --lang es` for Spanish):"
        )
        render_table(con, items)

    return summary, render_demo


SECTIONS["audit"] = _demo_section
