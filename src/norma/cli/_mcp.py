"""``norma mcp``: serve norma's tools to agents over the Model Context Protocol (a thin adapter over
:mod:`norma.mcp_server`; see docs/mcp.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

import click

from norma.cli._output import format_option, resolve_format

__all__ = ["mcp"]


@click.command("mcp")
@click.option(
    "--rules",
    "rules_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A rulebook (YAML or JSON) for match_rules, check_turn and list_rules.",
)
@click.option(
    "--store",
    "store_url",
    default=None,
    metavar="URL",
    help="A rule store (sqlite:///... or postgresql://...) whose tenants match_rules, check_turn and list_rules "
    "take; never created here.",
)
@click.option(
    "--audit-docs",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Normative documents for audit_output (and check_turn with audit).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "streamable-http"]),
    default="stdio",
    show_default=True,
    help="stdio: the client starts norma and talks over its stdin and stdout; streamable-http: serve on --host.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="With streamable-http: the address to bind.")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="With streamable-http: the port."
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="Server log on stderr.",
)
@format_option
@click.pass_context
def mcp(
    ctx: click.Context,
    rules_file: Path | None,
    store_url: str | None,
    audit_docs: Path | None,
    transport: str,
    host: str,
    port: int,
    log_level: str,
    output_format: str | None,
) -> int:
    """Serve norma's tools over the Model Context Protocol until the client disconnects (or SIGINT).

    Tools: match_rules, check_turn and list_rules (on --rules FILE, or on a tenant of --store URL), audit_output
    (on --audit-docs DIR), score_rubric and score_name_variations; judge checks ask the LLM of $NORMA_LLM_URL.
    With stdio, stdout carries the protocol: the start line goes to stderr. Needs the mcp extra: pip install
    'norma-rules[mcp]'.
    """
    from norma.mcp_server import Served, build_server

    fmt = resolve_format(ctx, output_format)
    if transport == "stdio" and ctx.get_parameter_source("host") == click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--host and --port go with --transport streamable-http")
    served = Served(rules_file=rules_file, store_url=store_url, audit_docs=audit_docs)
    try:
        server = build_server(served, log_level=cast("Any", log_level.upper()))  # one of click's choices
        banner: dict[str, Any] = {
            "transport": transport,
            "rules": str(rules_file) if rules_file is not None else None,
            "store": _redacted(store_url),
            "audit_docs": str(audit_docs) if audit_docs is not None else None,
        }
        if transport == "stdio":
            _announce(fmt, banner, sys.stderr)  # stdout is the protocol's
            server.run("stdio")
        else:
            banner["url"] = f"http://{host}:{port}/mcp"
            _announce(fmt, banner, sys.stdout)
            server.run("streamable-http", host=host, port=port)
    except KeyboardInterrupt:
        pass
    finally:
        served.close()
    return 0


def _redacted(url: str | None) -> str | None:
    if url is None:
        return None
    from norma.store import redact_url

    return redact_url(url)


def _announce(fmt: str, banner: dict[str, Any], stream: Any) -> None:
    """One line on what is served, as JSON or for people."""
    if fmt == "json":
        stream.write(json.dumps(banner, ensure_ascii=False) + "\n")
    else:
        serves = ", ".join(f"{key} {value}" for key, value in banner.items() if value is not None and key != "url")
        where = f" on {banner['url']}" if "url" in banner else " over stdio"
        stream.write(f"norma mcp{where}: {serves}\n")
    stream.flush()
