"""Real servers for the service tests: the app under uvicorn in a thread, or ``norma serve`` in a subprocess."""

from __future__ import annotations

import contextlib
import os
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

__all__ = ["free_port", "serve_app", "serve_process", "stop_process", "tree_rss", "wait_healthy"]

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
