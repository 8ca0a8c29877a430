"""``norma llm check`` (is the configured LLM answering?), ``norma llm local`` (a small model on this machine, for
trying the plumbing) and ``norma rules examples`` (LLM-written rule examples).

``check`` and ``examples`` read the LLM from ``$NORMA_LLM_URL``/``$NORMA_LLM_MODEL``/``$NORMA_LLM_API_KEY``/
``$NORMA_LLM_KIND``; the URL, model and kind can be given as options. The API key is only read from the environment
(a command line is visible to every user of the machine).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._lazy import SuggestingGroup
from norma.cli._output import db_option, emit, format_option, print_table, resolve_format
from norma.errors import BackendError, ConfigError

if TYPE_CHECKING:
    from norma.llm import ChatClient, LLMPing

__all__ = ["LOCAL_PORT", "llm", "rules_examples"]

F = TypeVar("F", bound=Callable[..., Any])

# norma.llm's variable names, spelt out so that `--help` need not import the HTTP clients (a test keeps them equal)
KIND_ENV = "NORMA_LLM_KIND"
MODEL_ENV = "NORMA_LLM_MODEL"
URL_ENV = "NORMA_LLM_URL"
LOCAL_PORT = 8080
"""``norma llm local``'s port: llama.cpp's own default, and the one the docs' examples use."""


def llm_options(func: F) -> F:
    """``--url``, ``--model`` and ``--kind``, each defaulting to its ``NORMA_LLM_*`` variable."""
    func = click.option(
        "--kind",
        type=click.Choice(["ollama", "openai"]),
        default=None,
        help=f"Backend protocol (default ${KIND_ENV}, else guessed from the URL).",
    )(func)
    func = click.option(
        "--model", default=None, metavar="NAME[,FALLBACK...]", help=f"Model and fallbacks (default ${MODEL_ENV})."
    )(func)
    return click.option("--url", default=None, metavar="URL", help=f"LLM server (default ${URL_ENV}).")(func)


def _client(url: str | None, model: str | None, kind: str | None, timeout: float | None = None) -> ChatClient:
    from norma.llm import get_llm

    client = get_llm(url, model, kind=kind, read_timeout=timeout)
    if client is None:
        raise ConfigError(
            "no LLM is configured",
            hint=f"set {URL_ENV} and {MODEL_ENV}, or pass --url and --model; run `norma docs llm`",
        )
    return client


@click.group("llm", cls=SuggestingGroup)
def llm() -> None:
    """LLM backend (Ollama or OpenAI-compatible) used for query phrasing, re-runs and rule examples."""


@llm.command("check")
@llm_options
@click.option("--timeout", type=click.FloatRange(min=0.001), default=None, help="Read timeout in seconds.")
@click.option("--prompt", default=None, help="Prompt to send instead of the built-in one-word check.")
@format_option
@click.pass_context
def check(
    ctx: click.Context,
    url: str | None,
    model: str | None,
    kind: str | None,
    timeout: float | None,
    prompt: str | None,
    output_format: str | None,
) -> int:
    """Send a tiny prompt to the configured LLM and print the model that answered and the latency.

    Exit 0 when it answered, 1 when it could not be reached or failed, 2 when nothing is configured.
    """
    from norma.llm import ping_llm, redact_url

    fmt = resolve_format(ctx, output_format)
    client = _client(url, model, kind, timeout)
    try:
        result = ping_llm(client) if prompt is None else ping_llm(client, prompt)
    except BackendError as exc:
        message = str(exc)
        payload = {"ok": False, "endpoint": redact_url(client.endpoint), "model": client.model, "error": message}
        emit(fmt, payload, lambda con: con.print(f"[red]LLM check failed[/red]: {escape(message)}"))
        return 1
    finally:
        client.close()
    emit(fmt, {"ok": True, **result.to_dict()}, lambda con: _check_table(con, result))
    return 0


def _check_table(con: Console, result: LLMPing) -> None:
    table = Table(show_header=False, title="LLM check")
    table.add_row("endpoint", result.endpoint)
    table.add_row("model", escape(result.model))
    table.add_row("latency", f"{result.latency_ms:.0f} ms")
    table.add_row("attempts", str(result.attempts))
    table.add_row("reply", escape(result.reply))
    print_table(con, table)


@llm.command("local")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (no API key is asked).")
@click.option(
    "--port", default=LOCAL_PORT, show_default=True, type=click.IntRange(0, 65535), help="Port (0: a free one)."
)
@click.option("--check", is_flag=True, help="Start the server and stop it: exit 0 if it can start here, else 2.")
@format_option
@click.pass_context
def local(ctx: click.Context, host: str, port: int, check: bool, output_format: str | None) -> int:
    """Serve a small local model (SmolLM2-135M-Instruct) as an OpenAI-compatible endpoint until Ctrl-C or SIGTERM.

    For trying the plumbing (the guard, the guarded endpoint, `norma llm check`), not for judging. Prints the OpenAI
    base URL and the model name (`--format json`: one JSON object on one line); exit 0 after a clean stop, 2 when
    the server cannot start (the `local` extra missing, the port taken, a checksum mismatch).
    """
    from norma.llm import LOCAL_MODEL_NOTE, serve_local

    fmt = resolve_format(ctx, output_format)
    started = time.perf_counter()
    with serve_local(host=host, port=port) as server:
        banner = {
            **server.to_dict(),
            "ready_s": round(time.perf_counter() - started, 1),
            "note": LOCAL_MODEL_NOTE,
            "try": f"norma llm check --url {server.url} --model {server.model}",
        }
        if check:
            _local_banner(fmt, {"ok": True, **banner}, check=True)
            _end_now(0)
        stop = threading.Event()
        previous = {  # a signal the command was started with ignored (nohup) stays ignored
            signum: signal.signal(signum, lambda *_: stop.set())
            for signum in (signal.SIGINT, signal.SIGTERM)
            if signal.getsignal(signum) != signal.SIG_IGN
        }
        try:
            _local_banner(fmt, banner, check=False)
            stop.wait()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        _end_now(0)  # SIGINT / SIGTERM: the server stopped as asked
    return 0


def _end_now(code: int) -> NoReturn:
    """End the process with ``code`` at once, output flushed, without dropping the llama.cpp server first:
    xllamacpp 2026.10's server destructor joins its task loop, and that join hung once in a CI run (the loop missed
    the stop, the HTTP thread still accepting) with the GIL held, so no timeout could end it. The operating system
    closes the port and frees the model when the process ends."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _local_banner(fmt: str, banner: dict[str, Any], *, check: bool) -> None:
    """The banner, flushed at once (a reader waits for it through a pipe): the URL first, alone on its line."""
    if fmt == "json":
        lines = [json.dumps(banner, ensure_ascii=False)]
    else:
        lines = [
            f"OpenAI base URL: {banner['url']}",
            f"model: {banner['model']} ({banner['model_file']}, ready in {banner['ready_s']} s)",
            f"note: {banner['note']}",
            f"try: {banner['try']}",
            "ok: it can start here (stopped)" if check else "serving until Ctrl-C or SIGTERM",
        ]
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.flush()


@click.command("examples")
@click.option("--tenant", "tenant_id", required=True, metavar="TENANT", help="The tenant id.")
@click.option("--rule", "rule_ids", multiple=True, metavar="ID", help="Only this rule (repeatable; default all).")
@click.option("-n", "count", type=click.IntRange(1, 100), default=10, show_default=True, help="Examples per rule.")
@click.option("--overwrite", is_flag=True, help="Replace examples a rule already has (default: skip such rules).")
@llm_options
@db_option
@format_option
@click.pass_context
def rules_examples(
    ctx: click.Context,
    tenant_id: str,
    rule_ids: tuple[str, ...],
    count: int,
    overwrite: bool,
    url: str | None,
    model: str | None,
    kind: str | None,
    db_url: str | None,
    output_format: str | None,
) -> int:
    """Have the LLM write example user messages for a tenant's rules, store them and re-embed the rules.

    The examples are ordinary rule fields: they show in `norma rules export` and can be edited there. Nothing is
    written unless every reply came back. Exit 1 when a rule got no usable example (it is left unchanged).
    """
    fmt = resolve_format(ctx, output_format)
    from norma.matching import fill_examples
    from norma.store import open_store  # the store is only needed here: `norma llm check` works without it

    client = _client(url, model, kind)
    store = open_store(db_url)
    try:
        result = fill_examples(store, tenant_id, list(rule_ids) or None, llm=client, n=count, overwrite=overwrite)
    finally:
        store.close()
        client.close()
    payload = result.to_dict()

    def table(con: Console) -> None:
        grid = Table(title=f"examples written for tenant {tenant_id} (version {result.version})")
        grid.add_column("rule")
        grid.add_column("examples")
        for rule_id, examples in result.updated.items():
            grid.add_row(escape(rule_id), escape("\n".join(examples)))
        print_table(con, grid)
        if result.skipped:
            con.print(f"skipped (already have examples; use --overwrite): {escape(', '.join(result.skipped))}")
        for rule_id, reason in result.failed.items():
            con.print(f"[yellow]{escape(rule_id)}[/yellow]: {escape(reason)}")

    emit(fmt, payload, table)
    return 1 if result.failed else 0
