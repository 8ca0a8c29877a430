"""``norma rules`` (import, export, list, history) and ``norma keys`` (create, list, revoke): thin adapters over
norma.store. Every command takes ``--db URL`` (default ``$NORMA_DB_URL``, else ``sqlite:///./.norma/norma.db``)."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, engine_options, run_batch
from norma.cli._output import emit, format_option, resolve_format
from norma.matching import Rule
from norma.store import (
    DB_URL_ENV,
    RulebookError,
    Store,
    dump_rulebook,
    export_rulebook,
    import_rulebook,
    open_store,
)

__all__ = ["keys", "rules"]

F = TypeVar("F", bound=Callable[..., Any])


def db_option(func: F) -> F:
    """``--db URL`` (also ``$NORMA_DB_URL``)."""
    option = click.option(
        "--db",
        "db_url",
        envvar=DB_URL_ENV,
        default=None,
        metavar="URL",
        help=f"The rule store: sqlite:///path.db or postgresql://… (default ${DB_URL_ENV}, else ./.norma/norma.db).",
    )
    return option(func)


def tenant_option(required: bool = True) -> Callable[[F], F]:
    def decorate(func: F) -> F:
        return click.option("--tenant", "tenant_id", required=required, metavar="TENANT", help="The tenant id.")(func)

    return decorate


@contextmanager
def _store(db_url: str | None) -> Iterator[Store]:
    store = open_store(db_url)
    try:
        yield store
    finally:
        store.close()


@click.group("rules")
def rules() -> None:
    """Rule store: import and export rulebooks, list rules and their history."""


@rules.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@tenant_option(required=False)
@db_option
@engine_options
@format_option
@click.pass_context
def import_command(
    ctx: click.Context,
    /,
    file: Path,
    tenant_id: str | None,
    db_url: str | None,
    output_format: str | None,
    **engine: Any,
) -> int:
    """Validate a rulebook (YAML or JSON) and import all its rules in one transaction.

    Every invalid rule is reported (index, field, problem) and nothing is written: exit 2. The tenant is --tenant,
    else the file's `tenant:`. Rules already stored unchanged are not counted as changes. With --engine, every
    text of every rule is embedded on that engine (e.g. a Ray cluster for a large corpus of examples).
    """
    fmt = resolve_format(ctx, output_format)
    options = EngineOptions.pop(engine)
    if options.shard is not None:
        raise click.UsageError("rules import takes no --shard: a rulebook is imported whole")
    with _store(db_url) as store:
        try:
            if options.engine is None:
                book, version = import_rulebook(store, file, tenant_id=tenant_id)
            else:
                from norma.batch import import_rulebook_with

                run = partial(run_batch, options=options, label="embedding")
                book, version = import_rulebook_with(store, file, run, tenant_id=tenant_id)
        except RulebookError as exc:
            problems = [p.model_dump() for p in exc.problems]
            if fmt == "json":
                emit(fmt, {"imported": False, "file": str(file), "problems": problems}, lambda con: None)
            else:
                click.echo(f"norma: error: {file}: {len(problems)} problem(s), nothing imported:", err=True)
                for problem in exc.problems:
                    click.echo(f"  {problem}", err=True)
            return 2
        payload = {
            "imported": True,
            "file": str(file),
            "tenant": book.tenant_id,
            "rules": len(book.rules),
            "version": version,
            "db": store.url,
        }

    def table(con: Console) -> None:
        con.print(
            f"{len(book.rules)} rules from {file} in tenant {book.tenant_id}: version {version} ({payload['db']})"
        )

    emit(fmt, payload, table)
    return 0


@rules.command("export")
@tenant_option()
@click.option("--output", "-o", type=click.Path(path_type=Path, dir_okay=False), default=None, help="Write here.")
@db_option
@format_option
@click.pass_context
def export_command(
    ctx: click.Context, tenant_id: str, output: Path | None, db_url: str | None, output_format: str | None
) -> int:
    """Write the tenant's rules as a rulebook: YAML, or JSON with --format json (to stdout or --output)."""
    fmt = resolve_format(ctx, output_format)
    with _store(db_url) as store:
        text = export_rulebook(store, tenant_id, fmt="json" if fmt == "json" else "yaml")
    if output is not None:
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote {output}", err=True)
    else:
        sys.stdout.write(text)
    return 0


@rules.command("list")
@tenant_option()
@click.option("--scope", type=click.Choice(["global", "scenario", "step"], case_sensitive=False), default=None)
@click.option("--scenario", "scenario_id", default=None, help="Only rules of this scenario.")
@click.option("--step", "step_id", default=None, help="Only rules of this step.")
@click.option("--enabled/--disabled", "enabled", default=None, help="Only enabled (or disabled) rules.")
@click.option("--tag", default=None, help="Only rules with this tag.")
@db_option
@format_option
@click.pass_context
def list_command(
    ctx: click.Context,
    tenant_id: str,
    scope: str | None,
    scenario_id: str | None,
    step_id: str | None,
    enabled: bool | None,
    tag: str | None,
    db_url: str | None,
    output_format: str | None,
) -> int:
    """List the tenant's rules (sorted by id), optionally filtered."""
    fmt = resolve_format(ctx, output_format)
    with _store(db_url) as store:
        found = store.list_rules(
            tenant_id, scope=scope, scenario_id=scenario_id, step_id=step_id, enabled=enabled, tag=tag
        )
        version = store.version(tenant_id)
    payload = {"tenant": tenant_id, "version": version, "rules": [r.to_dict() for r in found]}
    emit(fmt, payload, _render_rules(tenant_id, version, found))
    return 0


def _render_rules(tenant_id: str, version: int, found: list[Rule]) -> Callable[[Console], None]:
    def table(con: Console) -> None:
        grid = Table()
        grid.add_column("id", no_wrap=True)
        grid.add_column("scope", no_wrap=True)
        grid.add_column("priority", justify="right", no_wrap=True)
        grid.add_column("enabled", no_wrap=True)
        grid.add_column("tags", ratio=1)
        for rule in found:
            where = "/".join(p for p in (rule.scenario_id, rule.step_id) if p)
            grid.add_row(
                rule.id,
                f"{rule.scope.value} {where}".strip(),
                str(rule.priority),
                "yes" if rule.enabled else "no",
                ", ".join(rule.tags),
            )
        con.print(grid)
        con.print(f"{len(found)} rule(s), tenant {tenant_id} at version {version}")

    return table


@rules.command("history")
@click.argument("rule_id")
@tenant_option()
@db_option
@format_option
@click.pass_context
def history_command(
    ctx: click.Context, rule_id: str, tenant_id: str, db_url: str | None, output_format: str | None
) -> int:
    """Every committed version of one rule, oldest first (deletions included)."""
    fmt = resolve_format(ctx, output_format)
    with _store(db_url) as store:
        versions = store.history(tenant_id, rule_id)
    payload = {"tenant": tenant_id, "rule_id": rule_id, "versions": [v.to_dict() for v in versions]}

    def table(con: Console) -> None:
        grid = Table()
        grid.add_column("version", no_wrap=True)
        grid.add_column("tenant version", no_wrap=True)
        grid.add_column("changed at (UTC)", no_wrap=True)
        grid.add_column("rule", ratio=1)
        for item in versions:
            change = "(deleted)" if item.rule is None else item.rule.condition_text
            at = item.changed_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
            grid.add_row(str(item.version), str(item.tenant_version), at, change)
        con.print(grid)

    emit(fmt, payload, table)
    return 0


@click.group("keys")
def keys() -> None:
    """API keys of the service: create (the secret is shown once), list, revoke."""


@keys.command("create")
@click.option("--tenant", "tenant_id", default=None, metavar="TENANT", help="The tenant the key acts for.")
@click.option("--admin", is_flag=True, help="An admin key (every tenant; no --tenant).")
@click.option("--name", default="", help="A label for people.")
@db_option
@format_option
@click.pass_context
def keys_create(
    ctx: click.Context, tenant_id: str | None, admin: bool, name: str, db_url: str | None, output_format: str | None
) -> int:
    """Create an API key and print its secret (only its hash is stored: keep the secret now)."""
    fmt = resolve_format(ctx, output_format)
    if not admin and tenant_id is None:
        raise click.UsageError("pass --tenant TENANT, or --admin for an admin key")
    with _store(db_url) as store:
        secret = store.create_api_key(tenant_id, name=name, admin=admin)
        key = store.check_api_key(secret)
    assert key is not None
    payload = {**key.to_dict(), "secret": secret}

    def table(con: Console) -> None:
        who = "admin" if admin else f"tenant {tenant_id}"
        con.print(f"key {key.key_id} ({who}) created; its secret, shown only now:")
        con.print(secret)

    emit(fmt, payload, table)
    return 0


@keys.command("list")
@click.option("--tenant", "tenant_id", default=None, metavar="TENANT", help="Only this tenant's keys.")
@db_option
@format_option
@click.pass_context
def keys_list(ctx: click.Context, tenant_id: str | None, db_url: str | None, output_format: str | None) -> int:
    """List API keys (never their secrets), revoked ones included."""
    fmt = resolve_format(ctx, output_format)
    with _store(db_url) as store:
        found = store.list_api_keys(tenant_id)

    def table(con: Console) -> None:
        grid = Table("key id", "tenant", "admin", "name", "created (UTC)", "revoked")
        for key in found:
            grid.add_row(
                key.key_id,
                key.tenant_id or "*",
                "yes" if key.admin else "",
                key.name,
                key.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if key.created_at else "",
                key.revoked_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if key.revoked_at else "",
            )
        con.print(grid)

    emit(fmt, {"keys": [k.to_dict() for k in found]}, table)
    return 0


@keys.command("revoke")
@click.argument("key_id")
@db_option
@format_option
@click.pass_context
def keys_revoke(ctx: click.Context, key_id: str, db_url: str | None, output_format: str | None) -> int:
    """Revoke an API key for good (exit 2 when there is no such key)."""
    fmt = resolve_format(ctx, output_format)
    with _store(db_url) as store:
        store.revoke_api_key(key_id)
    emit(fmt, {"key_id": key_id, "revoked": True}, lambda con: con.print(f"key {key_id} revoked"))
    return 0


def _demo_section(folder: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
    book_path = folder / "rulebooks" / "banking-support.yaml"
    with tempfile.TemporaryDirectory(prefix="norma-demo-") as tmp, _store(f"sqlite:///{tmp}/norma.db") as store:
        book, first = import_rulebook(store, book_path)
        tenant = book.tenant_id or "demo"
        _, again = import_rulebook(store, book_path)
        rule = store.get_rule(tenant, "fees-explained")
        edited = store.upsert_rules(tenant, [rule.model_copy(update={"priority": rule.priority + 5})])
        history = store.history(tenant, "fees-explained")
        by_scope = {s: len(store.list_rules(tenant, scope=s)) for s in ("global", "scenario", "step")}
        exported = dump_rulebook(store.list_rules(tenant, scenario_id="card-lost"), tenant_id=tenant)
    summary = {
        "tenant": tenant,
        "rules": len(book.rules),
        "by_scope": by_scope,
        "version_after_import": first,
        "version_after_reimport": again,
        "version_after_edit": edited,
        "history_versions": [h.version for h in history],
        "card_lost_rules": exported.count("- id:"),
    }

    def render(con: Console) -> None:
        con.print(f"{book_path.name}: {len(book.rules)} rules for tenant {tenant} ({json.dumps(by_scope)})")
        con.print(f"import -> version {first}; the same file again -> version {again} (nothing changed)")
        con.print(f"priority of fees-explained edited -> version {edited}; its history has {len(history)} versions")
        con.print(f"scenario card-lost exported as a rulebook: {summary['card_lost_rules']} rules")

    return summary, render


SECTIONS["store"] = _demo_section
