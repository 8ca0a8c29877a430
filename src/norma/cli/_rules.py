"""``norma rules`` (import, export, list, show, history, delete) and ``norma keys`` (create, list, revoke): thin
adapters over norma.store. Every command takes ``--db URL`` (default ``$NORMA_DB_URL``, else
``sqlite:///./.norma/norma.db``). Commands that only read (or change what must already be there) never create a
store: "no store at ..." exits 2."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, engine_options, run_batch
from norma.cli._lazy import LazyCommand, LazyGroup, SuggestingGroup
from norma.cli._output import db_option, emit, format_option, print_table, resolve_format

if TYPE_CHECKING:
    from norma.matching import Rule
    from norma.store import RulebookChanges, Store

__all__ = ["keys", "rules"]

F = TypeVar("F", bound=Callable[..., Any])


def tenant_option(required: bool = True) -> Callable[[F], F]:
    def decorate(func: F) -> F:
        return click.option("--tenant", "tenant_id", required=required, metavar="TENANT", help="The tenant id.")(func)

    return decorate


@contextmanager
def _store(db_url: str | None, *, create: bool = True) -> Iterator[Store]:
    """The store at ``db_url``; ``create=False`` (commands that only read): "no store at ..." when it is missing."""
    from norma.store import open_store

    store = open_store(db_url, create=create)
    try:
        yield store
    finally:
        store.close()


@click.group(
    "rules",
    cls=LazyGroup,
    lazy={
        "adapt": LazyCommand(
            "norma.cli._adapt:adapt_command",
            "Fine-tune the encoder on a rulebook's own texts (conditions and examples) and write it to --out.",
        ),
        "calibrate": LazyCommand(
            "norma.cli._calibrate:calibrate",
            "Fit the tenant's gate and confidence to labelled messages and store them with its rules.",
        ),
        "coverage": LazyCommand(
            "norma.cli._rules_coverage:coverage_command",
            "What a rulebook covers on recorded turns: each rule's share, rules that govern none, gaps, competing "
            "rules.",
        ),
        "diff": LazyCommand(
            "norma.cli._rules_diff:diff_command",
            "Check recorded turns against two versions of a rulebook and report what the change does.",
        ),
        "diff-git": LazyCommand(
            "norma.cli._diff_hook:diff_git_command",
            "Check recorded turns against each rulebook as it is now and as it was at a git commit (--against, HEAD).",
        ),
        "doctor": LazyCommand(
            "norma.cli._rulebook_tools:doctor_command",
            "Check a rulebook: misplaced examples, near-duplicate rules, too few examples, unrelated conditions.",
        ),
        "eval": LazyCommand(
            "norma.cli._rulebook_tools:eval_command",
            "Evaluate a rulebook on labelled messages: acc@1, recall@k, MRR, precision and recall at the gate, per "
            "rule.",
        ),
        "examples": LazyCommand(
            "norma.cli._llm:rules_examples",
            "Have the LLM write example user messages for a tenant's rules, store them and re-embed the rules.",
        ),
        "validate": LazyCommand(
            "norma.cli._rules_validate:validate_command",
            "Validate rulebook files (YAML or JSON) as `rules import` would, writing nothing.",
        ),
    },
)
def rules() -> None:
    """Rule store: import and export rulebooks, list rules and their history."""


@rules.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@tenant_option(required=False)
@click.option(
    "--prune",
    is_flag=True,
    help="Make the tenant exactly the file: delete stored rules it leaves out (kept in their history), in the same "
    "new version.",
)
@click.option("--dry-run", is_flag=True, help="Only show what would change (added, updated, deleted, unchanged).")
@db_option
@engine_options
@format_option
@click.pass_context
def import_command(
    ctx: click.Context,
    /,
    file: Path,
    tenant_id: str | None,
    prune: bool,
    dry_run: bool,
    db_url: str | None,
    output_format: str | None,
    **engine: Any,
) -> int:
    """Validate a rulebook (YAML or JSON) and import all its rules in one transaction.

    Every invalid rule is reported (index, field, problem) and nothing is written: exit 2. The tenant is --tenant,
    else the file's `tenant:`. Rules already stored unchanged are not counted as changes. With --prune the tenant
    becomes exactly the file; --dry-run writes nothing (and creates no store). With --engine, every text of every
    rule is embedded on that engine (e.g. a Ray cluster for a large corpus of examples).
    """
    from norma.store import RulebookError, import_rulebook, rulebook_changes

    fmt = resolve_format(ctx, output_format)
    options = EngineOptions.pop(engine)
    if options.shard is not None:
        raise click.UsageError("rules import takes no --shard: a rulebook is imported whole")
    with _store(db_url, create=not dry_run) as store:
        try:
            changes = None
            if dry_run or prune:
                book, changes = rulebook_changes(store, file, tenant_id=tenant_id, prune=prune)
            if dry_run:
                assert changes is not None
                version = store.version(changes.tenant_id)
            elif options.engine is None:
                book, version = import_rulebook(store, file, tenant_id=tenant_id, prune=prune)
            else:
                from norma.batch import import_rulebook_with

                run = partial(run_batch, options=options, label="embedding")
                book, version = import_rulebook_with(store, file, run, tenant_id=tenant_id, prune=prune)
        except RulebookError as exc:
            problems = [p.model_dump() for p in exc.problems]
            if fmt == "json":
                emit(fmt, {"imported": False, "file": str(file), "problems": problems}, lambda con: None)
            else:
                from norma.cli._errors import ErrorLine, echo_errors, error_lines

                head = ErrorLine(f"{file}: {len(problems)} problem(s), nothing imported:")
                echo_errors([head, *error_lines(exc)[1:]])
            return 2
        payload: dict[str, Any] = {
            "imported": not dry_run,
            "dry_run": dry_run,
            "file": str(file),
            "tenant": book.tenant_id,
            "rules": len(book.rules),
            "version": version,
            "db": store.url,
        }
    if changes is not None:
        payload["changes"] = {
            kind: list(getattr(changes, kind)) for kind in ("added", "updated", "deleted", "unchanged")
        }

    def table(con: Console) -> None:
        if changes is not None:
            _print_changes(con, changes, dry_run=dry_run)
        if not dry_run:
            con.print(
                f"{len(book.rules)} rules from {file} in tenant {book.tenant_id}: version {version} ({payload['db']})"
            )

    emit(fmt, payload, table)
    return 0


def _print_changes(con: Console, changes: RulebookChanges, *, dry_run: bool) -> None:
    parts = {k: getattr(changes, k) for k in ("added", "updated", "deleted", "unchanged")}
    summary = ", ".join(f"{len(ids)} {kind}" for kind, ids in parts.items())
    verb = "would change" if dry_run else "changes"
    con.print(f"tenant {changes.tenant_id} {verb}: {summary}{' (dry run: nothing written)' if dry_run else ''}")
    for kind in ("added", "updated", "deleted"):
        if parts[kind]:
            con.print(f"  {kind}: {', '.join(parts[kind])}", markup=False)


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
    from norma.store import export_rulebook

    fmt = resolve_format(ctx, output_format)
    with _store(db_url, create=False) as store:
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
    with _store(db_url, create=False) as store:
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
        print_table(con, grid)
        con.print(f"{len(found)} rule(s), tenant {tenant_id} at version {version}")

    return table


def _one_rule_command(name: str) -> Callable[[F], click.Command]:
    """``norma rules NAME RULE_ID --tenant T [--db URL] [--format F]``: the options of the commands about one rule."""

    def wrap(func: F) -> click.Command:
        decorated: Callable[..., Any] = func
        for decorate in (click.pass_context, format_option, db_option, tenant_option(), click.argument("rule_id")):
            decorated = decorate(decorated)
        return rules.command(name)(decorated)

    return wrap


@_one_rule_command("history")
def history_command(
    ctx: click.Context, rule_id: str, tenant_id: str, db_url: str | None, output_format: str | None
) -> int:
    """Every committed version of one rule, oldest first (deletions included)."""
    fmt = resolve_format(ctx, output_format)
    with _store(db_url, create=False) as store:
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
        print_table(con, grid)

    emit(fmt, payload, table)
    return 0


@_one_rule_command("show")
def show_command(
    ctx: click.Context, rule_id: str, tenant_id: str, db_url: str | None, output_format: str | None
) -> int:
    """Print one stored rule: as a rulebook entry (YAML), or JSON with --format json."""
    from norma.store import dump_rulebook

    fmt = resolve_format(ctx, output_format)
    with _store(db_url, create=False) as store:
        rule = store.get_rule(tenant_id, rule_id)
    if fmt == "json":
        emit(fmt, {"tenant": tenant_id, "rule": rule.to_dict()}, lambda con: None)
    else:
        text = dump_rulebook([rule], tenant_id=tenant_id)
        sys.stdout.write(text[text.index("rules:") :])
    return 0


@rules.command("delete")
@click.argument("rule_ids", nargs=-1, required=True, metavar="ID...")
@tenant_option()
@click.option("--dry-run", is_flag=True, help="Only show which rules would be deleted.")
@db_option
@format_option
@click.pass_context
def delete_command(
    ctx: click.Context,
    rule_ids: Sequence[str],
    tenant_id: str,
    dry_run: bool,
    db_url: str | None,
    output_format: str | None,
) -> int:
    """Delete rules of a tenant by id, in one transaction and one new version (their history is kept).

    Exit 2, deleting nothing, when any id is not stored.
    """
    from norma.errors import NotFoundError

    fmt = resolve_format(ctx, output_format)
    ids = list(dict.fromkeys(rule_ids))
    with _store(db_url, create=False) as store:
        if dry_run:
            present = {r.id for r in store.list_rules(tenant_id)}
            missing = [i for i in ids if i not in present]
            if missing:
                shown = ", ".join(repr(i) for i in missing[:5])
                raise NotFoundError(f"tenant {tenant_id!r} has no rule {shown}{' …' if len(missing) > 5 else ''}")
            version = store.version(tenant_id)
        else:
            version = store.delete_rules(tenant_id, ids)
    payload = {"tenant": tenant_id, "deleted": ids, "dry_run": dry_run, "version": version}
    verb = "would delete" if dry_run else "deleted"
    after = "(dry run: nothing written)" if dry_run else f"now at version {version}"
    emit(
        fmt,
        payload,
        lambda con: con.print(
            f"{verb} {len(ids)} rule(s) of tenant {tenant_id}, {after}: {', '.join(ids)}", markup=False
        ),
    )
    return 0


@click.group("keys", cls=SuggestingGroup)
def keys() -> None:
    """API keys of the service: create (the secret is shown once), list, revoke."""


@keys.command("create")
@click.option("--tenant", "tenant_id", default=None, metavar="TENANT", help="The tenant the key acts for.")
@click.option("--admin", is_flag=True, help="An admin key (every tenant; no --tenant).")
@click.option("--name", default="", help="A label for people.")
@click.option(
    "--create-tenant",
    is_flag=True,
    help="Allow a key for a tenant that has no rules yet (and create the store if there is none).",
)
@db_option
@format_option
@click.pass_context
def keys_create(
    ctx: click.Context,
    tenant_id: str | None,
    admin: bool,
    name: str,
    create_tenant: bool,
    db_url: str | None,
    output_format: str | None,
) -> int:
    """Create an API key and print its secret (only its hash is stored: keep the secret now).

    A key for a tenant the store does not have (no rule was ever imported) is refused unless --create-tenant.
    """
    fmt = resolve_format(ctx, output_format)
    if not admin and tenant_id is None:
        raise click.UsageError("pass --tenant TENANT, or --admin for an admin key")
    with _store(db_url, create=admin or create_tenant) as store:
        if tenant_id is not None and not create_tenant and tenant_id not in store.tenants():
            raise click.UsageError(
                f"tenant {tenant_id!r} does not exist in {store.url}: import its rules first "
                f"(norma rules import FILE --tenant {tenant_id}), or pass --create-tenant"
            )
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
    with _store(db_url, create=False) as store:
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
        print_table(con, grid)

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
    with _store(db_url, create=False) as store:
        store.revoke_api_key(key_id)
    emit(fmt, {"key_id": key_id, "revoked": True}, lambda con: con.print(f"key {key_id} revoked"))
    return 0


def _demo_section(folder: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
    from norma.store import dump_rulebook, import_rulebook

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
