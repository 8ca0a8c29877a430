"""``norma serve``: the HTTP service (norma.service) under uvicorn; ``--demo`` is what ``make run`` starts.

One worker serves in this process, its app built from the settings. Several workers are started from the import
string ``norma.service:app_from_env`` (uvicorn's factory mode) so any number of processes build the same app; the
settings reach them as JSON in ``$NORMA_SERVICE_SETTINGS``, with each worker's share of the cores in
``$NORMA_EMBEDDINGS_THREADS``; ``--int8`` is ``$NORMA_EMBEDDINGS_INT8=1`` for the service's embedder. The environment
is the one channel to those processes and norma never writes its own: when the server needs values this process's
environment lacks, the command runs again in a process started with them (:func:`norma.cli._relaunch.relaunch`:
the ``norma`` command becomes it, same pid and streams) before it does anything else. One worker with ``--int8``
needs it too, for now: the serving process picks its encoder wherever it calls
:func:`~norma.embeddings.get_embedder` with no arguments (the tenants' matchers, the store embedding the demo and
pushed rules, the start-up warm-up, the readiness probe, the re-embedding pass), and only the environment reaches all
of them; an encoder in the settings alone would embed messages int8 against fp32 rule vectors. SIGINT / SIGTERM shut
down gracefully: no new connections, in-flight requests finish (up to ``--graceful-timeout`` s), the store is
closed.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from norma._package_data import examples_folder
from norma._safety import ensure_bindable
from norma.cli._output import emit, format_option, resolve_format
from norma.cli._relaunch import environment_differs, relaunch
from norma.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from norma.service import DemoTenant, ServiceSettings

__all__ = ["serve"]

_OPTION_NAMES = {
    "request_timeout": "--timeout",
    "cors_origins": "--cors-origin",
    "db_url": "--db",
    "upstream_url": "--upstream",
}
_LEVELS = ("critical", "error", "warning", "info", "debug")


def _banner(
    host: str, port: int, demo: DemoTenant | None, upstream: str | None = None, policy: str | None = None
) -> dict[str, Any]:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    base = f"http://{shown}:{port}"
    payload: dict[str, Any] = {"url": base, "playground": f"{base}/", "openapi": f"{base}/docs"}
    if upstream is not None:  # the guarded endpoint, where an OpenAI client points its base_url (the
        tenant = demo.tenant if demo is not None else "TENANT"  # settings refused an upstream URL holding a key)
        payload["guard"] = {
            "endpoint": f"{base}/v1/tenants/{tenant}/chat/completions",
            "base_url": f"{base}/v1/tenants/{tenant}",
            "upstream": upstream.rstrip("/"),
            "policy": policy,
        }
    if demo is not None:
        payload["demo"] = demo.model_dump()
        payload["playground"] = f"{base}/#key={demo.key}"
        payload["curl"] = (
            f"curl -s {base}/v1/tenants/{demo.tenant}/match -H 'Authorization: Bearer {demo.key}' "
            "-H 'Content-Type: application/json' -d '{\"message\": \"someone used my card without asking\"}'"
        )
    return payload


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64), help="Worker processes.")
@click.option(
    "--db",
    "db_url",
    default=None,
    metavar="URL",
    help="Rule store URL (default $NORMA_DB_URL, else sqlite:///./.norma/norma.db).",
)
@click.option("--log-level", type=click.Choice(_LEVELS), default="info", show_default=True)
@click.option("--audit-docs", type=click.Path(path_type=Path), default=None, help="Normative documents for /v1/audit.")
@click.option("--rate-limit", type=float, default=None, help="Requests/s per key and worker (0: off; default 100).")
@click.option("--rate-burst", type=int, default=None, help="Requests a key may make at once (default 200).")
@click.option(
    "--auth-failure-rate",
    type=float,
    default=None,
    help="Failed authentications/s per client address and per key id, after the burst (0: off; default 1).",
)
@click.option(
    "--auth-failure-burst", type=int, default=None, help="Failed authentications allowed at once (default 20)."
)
@click.option("--max-body-bytes", type=int, default=None, help="Largest request body (default 1 MiB).")
@click.option("--timeout", "request_timeout", type=float, default=None, help="Seconds per request (default 30).")
@click.option("--max-header-bytes", type=int, default=None, help="Largest single request header (default 8 KiB).")
@click.option(
    "--max-head-bytes", type=int, default=None, help="Largest request line and headers together (default 32 KiB)."
)
@click.option(
    "--header-timeout", type=float, default=None, help="Seconds to send a complete request head (default 10)."
)
@click.option("--body-timeout", type=float, default=None, help="Seconds to send a whole request body (default 30).")
@click.option("--max-connections", type=int, default=None, help="Open connections per worker (default 1000).")
@click.option("--store-connect-timeout", type=float, default=None, help="Seconds to connect to PostgreSQL (default 3).")
@click.option("--store-read-timeout", type=float, default=None, help="Seconds a PostgreSQL read may wait (default 5).")
@click.option(
    "--store-write-timeout",
    type=float,
    default=None,
    help="Seconds a PostgreSQL write may wait; then rolled back and 503 (default 20).",
)
@click.option(
    "--stale-for",
    type=float,
    default=None,
    help="Store unreachable: seconds cached matchers and recently verified keys still answer (0: never; default 300).",
)
@click.option(
    "--upstream",
    "upstream_url",
    default=None,
    metavar="URL",
    help="The OpenAI-compatible model the guarded endpoint (/v1/tenants/T/chat/completions) forwards to, its base "
    "URL (e.g. https://api.openai.com/v1); its key from $NORMA_UPSTREAM_API_KEY.",
)
@click.option(
    "--upstream-timeout", type=float, default=None, help="Seconds an upstream call may take; then 504 (default 60)."
)
@click.option(
    "--guard-policy",
    type=click.Choice(["repair", "block", "flag"]),
    default=None,
    help="What the guarded endpoint does with a failing answer (default repair).",
)
@click.option(
    "--guard-max-repairs", type=int, default=None, help="Times repair asks the upstream again, 0-5 (default 1)."
)
@click.option("--cors-origin", "cors_origins", multiple=True, help="Allow browser calls from this origin (repeatable).")
@click.option(
    "--graceful-timeout",
    type=click.IntRange(1, 3600),
    default=10,
    show_default=True,
    help="Seconds to finish requests on shutdown.",
)
@click.option(
    "--int8",
    is_flag=True,
    help="int8 embeddings (NORMA_EMBEDDINGS_INT8=1): about a third more match requests/s; rules are re-embedded once.",
)
@click.option("--demo", is_flag=True, help="Load the example rulebooks into tenant 'demo', make a key, print the URL.")
@click.option(
    "--examples",
    type=click.Path(path_type=Path),
    default=None,
    help="With --demo: the examples folder (default: the ones norma ships).",
)
@format_option
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    workers: int,
    db_url: str | None,
    log_level: str,
    audit_docs: Path | None,
    rate_limit: float | None,
    rate_burst: int | None,
    auth_failure_rate: float | None,
    auth_failure_burst: int | None,
    max_body_bytes: int | None,
    request_timeout: float | None,
    max_header_bytes: int | None,
    max_head_bytes: int | None,
    header_timeout: float | None,
    body_timeout: float | None,
    max_connections: int | None,
    store_connect_timeout: float | None,
    store_read_timeout: float | None,
    store_write_timeout: float | None,
    stale_for: float | None,
    upstream_url: str | None,
    upstream_timeout: float | None,
    guard_policy: str | None,
    guard_max_repairs: int | None,
    cors_origins: tuple[str, ...],
    graceful_timeout: int,
    int8: bool,
    demo: bool,
    examples: Path | None,
    output_format: str | None,
) -> int:
    """Serve the HTTP API (/v1, OpenAPI at /docs) and the playground (/) until SIGINT or SIGTERM.

    The admin key, if any, is read from $NORMA_ADMIN_KEY, the upstream's key from $NORMA_UPSTREAM_API_KEY (never
    from the command line, where `ps` shows it).
    """
    fmt = resolve_format(ctx, output_format)
    try:
        import uvicorn

        from norma.service import ServiceSettings, env_settings
    except ImportError as exc:
        raise MissingDependencyError(
            "the HTTP service", extra="service", install="pip install 'norma-rules[service]'"
        ) from exc
    if demo:
        examples = examples if examples is not None else examples_folder()
        if audit_docs is None and (examples / "audit" / "docs").is_dir():
            audit_docs = examples / "audit" / "docs"
    options: dict[str, Any] = {
        "db_url": db_url or os.environ.get("NORMA_DB_URL") or None,
        "admin_key": os.environ.get("NORMA_ADMIN_KEY") or None,
        "audit_docs": audit_docs,
        "rate_limit": rate_limit,
        "rate_burst": rate_burst,
        "auth_failure_rate": auth_failure_rate,
        "auth_failure_burst": auth_failure_burst,
        "max_body_bytes": max_body_bytes,
        "request_timeout": request_timeout,
        "max_header_bytes": max_header_bytes,
        "max_head_bytes": max_head_bytes,
        "header_timeout": header_timeout,
        "body_timeout": body_timeout,
        "max_connections": max_connections,
        "store_connect_timeout": store_connect_timeout,
        "store_read_timeout": store_read_timeout,
        "store_write_timeout": store_write_timeout,
        "stale_for": stale_for,
        "cors_origins": cors_origins or None,
        "upstream_url": upstream_url,
        "upstream_timeout": upstream_timeout,
        "guard_policy": guard_policy,
        "guard_max_repairs": guard_max_repairs,
    }
    import pydantic

    try:
        given = {k: v for k, v in options.items() if v is not None}
        settings = ServiceSettings.model_validate({**env_settings(), **given})  # options win over NORMA_*
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0])
        option = _OPTION_NAMES.get(field, "--" + field.replace("_", "-"))
        raise click.BadParameter(str(first["msg"]), param_hint=option) from None
    environment = _server_environment(settings, workers, int8=int8)
    if environment_differs(environment):  # before anything else: the demo tenant is embedded as the server embeds
        return relaunch(ctx, environment)
    from norma.cli._workers import reuse_port_available, run_reuse_port_workers
    from norma.service import http_protocol, logging_config, seed_demo_tenant

    _check_port_free(host, port)
    demo_info = seed_demo_tenant(settings.db_url, examples) if demo else None
    if demo_info is not None:  # a store file may have been created in the working folder: say where
        from norma.store import redact_url

        click.echo(
            f"norma: --demo: tenant {demo_info.tenant!r} and its key are in the store {redact_url(demo_info.store)} "
            "(--db URL or $NORMA_DB_URL chooses another)",
            err=True,
        )
    banner = _banner(host, port, demo_info, settings.upstream_url, settings.guard_policy)
    if demo_info is None:  # every /v1 route but health and readiness needs a key: say how to get one
        from norma.store import redact_url

        db = f" --db {redact_url(db_url)}" if db_url else ""
        banner["keys"] = (
            f"requests need an API key: create one with `norma keys create --tenant TENANT{db}`"
            " (or set NORMA_ADMIN_KEY before starting, for an admin key)"
        )

    def table(con: Console) -> None:
        con.print(f"norma serving on {banner['url']}  (API docs: {banner['openapi']})")
        if demo_info is not None:
            con.print(f"demo tenant {demo_info.tenant!r}: {demo_info.rules} rules from {demo_info.rulebooks}")
            con.print(f"API key (shown once): {demo_info.key}")
            con.print(f"playground: {banner['playground']}")
            con.print(f"try: {banner['curl']}")
        else:
            con.print(f"playground: {banner['playground']}")
            con.print(banner["keys"])
        guard = banner.get("guard")
        if guard is not None:
            con.print(
                f"guarded endpoint: {guard['endpoint']} -> {guard['upstream']}/chat/completions "
                f"(policy {guard['policy']}; an OpenAI client's base_url: {guard['base_url']})"
            )

    emit(fmt, banner, table)
    sys.stdout.flush()  # the key and the URL now, also through a pipe or into a file, not when the server stops
    # uvicorn shuts down gracefully on SIGINT / SIGTERM, then re-raises the signal to the handler it found at start.
    # That handler ends the command with exit 0 and no KeyboardInterrupt, and it also stops a server signalled
    # before uvicorn took the signals over (a no-op handler there would lose the signal: the server ran on).
    previous = {signum: signal.signal(signum, _stop_signal) for signum in (signal.SIGINT, signal.SIGTERM)}
    uvicorn_options: dict[str, Any] = {
        "factory": True,  # the app is built in each worker (several: from $NORMA_SERVICE_SETTINGS)
        "host": host,
        "port": port,
        "workers": workers,
        "log_config": logging_config(log_level),
        "log_level": log_level,
        "access_log": False,
        "server_header": False,
        "ws": "none",  # no WebSocket routes
        "http": http_protocol(settings),  # httptools with caps on the request head's size and time, and connections
        "timeout_graceful_shutdown": graceful_timeout,
    }
    try:
        if workers > 1 and reuse_port_available():  # a socket per worker: connections spread evenly (_workers)
            try:
                run_reuse_port_workers(uvicorn.Config("norma.service:app_from_env", **uvicorn_options))
            except OSError as exc:
                raise ConfigError(f"the server could not start on {host}:{port}: {exc.strerror}") from None
        elif workers > 1:
            uvicorn.run("norma.service:app_from_env", **uvicorn_options)
        else:
            from norma.service import create_app

            uvicorn.run(functools.partial(create_app, settings), **uvicorn_options)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise ConfigError(f"the server could not start on {host}:{port} (see the log above)") from None
    except _Stopped:
        pass  # SIGINT / SIGTERM: stopped as asked
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 0


def _check_port_free(host: str, port: int) -> None:
    """ConfigError when ``host:port`` cannot be bound, before anything says the server is serving there.

    uvicorn binds later (with ``SO_REUSEADDR``, as here); a port taken in between still fails there, with its log.
    """
    if port != 0:
        ensure_bindable(
            host or None, port, failed="the server could not start on", in_use="stop what uses it, or pass --port"
        )


def _server_environment(settings: ServiceSettings, workers: int, *, int8: bool = False) -> Mapping[str, str]:
    """What the server's processes need in their environment, by variable.

    Several workers: the settings (:data:`norma.service.SETTINGS_ENV`, read by ``app_from_env``) and each worker's
    share of the cores for the embedding model, unless ``$NORMA_EMBEDDINGS_THREADS`` says (onnxruntime defaults
    to one intra-op thread per core in every process; N workers would run N x cores threads that spin against each
    other). ``int8``: ``$NORMA_EMBEDDINGS_INT8=1``, what the service's embedder reads. One worker needs nothing
    else: its app is built here, from ``settings``.
    """
    from norma.embeddings import INT8_ENV, THREADS_ENV
    from norma.service import SETTINGS_ENV

    environment: dict[str, str] = {}
    if workers > 1:
        environment[SETTINGS_ENV] = settings.to_env()
        if not os.environ.get(THREADS_ENV, "").strip():
            try:
                cores = len(os.sched_getaffinity(0))
            except AttributeError:  # not on Linux
                cores = os.cpu_count() or 1
            environment[THREADS_ENV] = str(max(1, cores // workers))
    if int8:
        environment[INT8_ENV] = "1"
    return environment


class _Stopped(Exception):
    """SIGINT or SIGTERM reached the command outside uvicorn's own handlers."""


def _stop_signal(signum: int, frame: FrameType | None) -> None:
    """The handler uvicorn finds at start: stops the command (before uvicorn serves, or when it re-raises the signal
    after its graceful shutdown)."""
    raise _Stopped
