"""Several uvicorn workers, each with its own listening socket (``SO_REUSEPORT``), so the kernel spreads
connections evenly over them.

uvicorn's multi-worker mode binds one socket in the parent and shares it: every worker's event loop wakes on each
new connection and the first one to run accepts every pending connection at once. With a few keep-alive clients
(an agent platform's connection pool, a reverse proxy) one worker ends up with all of them and the others idle:
measured with 4 keep-alive clients and 2 workers, one worker at 117 % CPU and the other at 20 %. With
``SO_REUSEPORT`` each worker listens on its own socket bound to the same address and the kernel hashes each new
connection to one of them.

The parent binds a socket to the address first (without listening), so a port that is taken fails at once, in the
parent, as before; that socket never accepts anything. uvicorn's supervisor (``Multiprocess``: health checks,
restarts, graceful shutdown on SIGINT / SIGTERM) is kept as it is; only its worker process class binds its own
socket before running the server.
"""

from __future__ import annotations

import socket
import sys
from typing import Any

from uvicorn.supervisors import multiprocess

__all__ = ["ReusePortProcess", "bind_reuse_port", "reuse_port_available", "run_reuse_port_workers"]


def reuse_port_available() -> bool:
    """Whether this platform has ``SO_REUSEPORT`` with load balancing (Linux)."""
    return hasattr(socket, "SO_REUSEPORT") and sys.platform.startswith("linux")


def bind_reuse_port(host: str, port: int, *, listen: bool, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEADDR`` and ``SO_REUSEPORT`` (listening if asked)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        sock.bind(address)
        if listen:
            sock.listen(backlog)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock


class ReusePortProcess(multiprocess.Process):
    """uvicorn's worker process, serving on a socket of its own bound with ``SO_REUSEPORT``."""

    def target(self, sockets: list[socket.socket] | None = None) -> None:  # runs in the worker
        config = self.config
        own = bind_reuse_port(config.host, config.port, listen=True, backlog=config.backlog)
        super().target(sockets=[own])


def run_reuse_port_workers(config: Any) -> None:
    """Run ``config.workers`` workers of ``config`` (a ``uvicorn.Config``), each on its own reuse-port socket.

    Raises OSError when the address cannot be bound (in the parent, before any worker starts).
    """
    holder = bind_reuse_port(config.host, config.port, listen=False)
    original = multiprocess.Process
    multiprocess.Process = ReusePortProcess  # type: ignore[misc]
    try:
        multiprocess.Multiprocess(config, sockets=[holder]).run()
    finally:
        multiprocess.Process = original  # type: ignore[misc]
        holder.close()
