"""Real servers for the service tests: the app under uvicorn in a thread, or ``norma serve`` in a subprocess."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import uvicorn

__all__ = [
    "free_port",
    "litellm_command",
    "litellm_proxy",
    "serve_app",
    "serve_process",
    "stop_process",
    "tree_rss",
    "wait_healthy",
]

NORMA = str(Path(sys.executable).parent / "norma")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(proc: subprocess.Popen[Any], *, timeout: float = 20.0) -> None:
    """SIGTERM (a graceful shutdown), then SIGKILL after ``timeout`` seconds; nothing when it already ended."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tree_rss(pid: int) -> int:
    """Resident memory (bytes) of ``pid`` and all its descendants, from /proc."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
    return total


def wait_healthy(url: str, *, timeout: float = 30.0, proc: subprocess.Popen[Any] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not become healthy in {timeout} s")


@contextlib.contextmanager
def serve_app(app: Any, **options: Any) -> Iterator[str]:
    """Serve an ASGI app on 127.0.0.1 (a port the OS picks) in a thread; yield its base URL. ``options`` go to
    ``uvicorn.Config`` (e.g. ``http=http_protocol(settings)``, the protocol ``norma serve`` runs)."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_config=None, access_log=False, lifespan="on", ws="none", **options
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


@contextlib.contextmanager
def serve_process(
    args: Sequence[str], *, log: Path, env: dict[str, str] | None = None, cwd: str | Path | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run ``norma serve ARGS --port P`` in a subprocess until healthy (its stderr, the JSON log, goes to ``log``);
    yield (url, process); SIGTERM it on exit."""
    port = free_port()
    full_env = {**os.environ, **(env or {})}
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [NORMA, "serve", "--port", str(port), *args],
            env=full_env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc=proc)
        yield url, proc
    finally:
        stop_process(proc)
        if proc.stdout is not None:
            proc.stdout.close()


REPO = Path(__file__).resolve().parents[2]


def litellm_command() -> list[str] | None:
    """The ``litellm`` proxy command: ``$NORMA_LITELLM`` (a path to its ``litellm`` script, e.g. in a separate
    virtualenv), else the project's ``.litellm-venv`` (``make install`` makes it), else the one beside this Python,
    else on PATH; None when there is none."""
    configured = os.environ.get("NORMA_LITELLM")
    if configured:
        return [configured]
    for beside in (REPO / ".litellm-venv" / "bin" / "litellm", Path(sys.executable).parent / "litellm"):
        if beside.exists():
            return [str(beside)]
    found = shutil.which("litellm")
    return [found] if found else None


@contextlib.contextmanager
def litellm_proxy(command: list[str], config: str, folder: Path, *, env: dict[str, str] | None = None) -> Iterator[str]:
    """A real LiteLLM proxy with ``config`` (YAML) on a free loopback port, its log in ``folder``: its URL once it is
    live; RuntimeError with the log's last lines when it exits or is not live within 120 s. Stopped after."""
    path = folder / "litellm.yaml"
    path.write_text(config, encoding="utf-8")
    environment = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no network for its price list
        "NO_DOCS": "True",
        "LITELLM_LOG": "ERROR",
        **(env or {}),
    }
    port = free_port()
    log = folder / "litellm.log"
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [*command, "--config", str(path), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environment,
            cwd=folder,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
                raise RuntimeError(f"the litellm proxy exited with {proc.returncode}:\n{tail}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health/liveliness", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
                raise RuntimeError(f"the litellm proxy did not start in 120 s:\n{tail}")
            time.sleep(0.25)
        yield url
    finally:
        stop_process(proc)
