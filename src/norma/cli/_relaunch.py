"""A command run again, with the same arguments, in a process whose environment holds what it needs.

norma never writes ``os.environ``. When a command needs other processes to see a setting that only the environment
carries to them (``norma serve``: the settings of its uvicorn workers, and the int8 and thread choices of the
service's embedder), it runs again in a process started with that environment explicitly: the ``norma`` command
becomes that process (``os.execve``: the same pid, standard streams and signals, so a supervisor or a shell sees
one process as before); ``main(argv)`` called by a program (or on a system without ``execve``) starts it as a
child, passes SIGINT and SIGTERM on to it and waits for it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import click

from norma.errors import ConfigError

__all__ = ["INVOCATION", "Invocation", "environment_differs", "relaunch"]

INVOCATION = "invocation"
"""Where the root context's object keeps the :class:`Invocation`."""

_BOOT = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from norma.cli._app import run; from norma.cli._relaunch import Invocation; "
    "sys.exit(run(Invocation(tuple(sys.argv[3:]), 'relaunched')))"
)
"""What the new process runs, given this process's import path (the same norma, wherever it was imported from),
``norma`` (so that ``ps`` and ``pgrep -f 'norma serve'`` still show the command) and the command line."""


@dataclass(frozen=True)
class Invocation:
    """How the command line runs: its arguments, and whose process runs them."""

    argv: tuple[str, ...]
    """The arguments (without the program name)."""
    process: Literal["own", "caller", "relaunched"]
    """``own``: the ``norma`` command (console script, ``python -m norma``); ``caller``: ``main(argv)`` called by a
    program; ``relaunched``: the process :func:`relaunch` started."""


def environment_differs(environment: Mapping[str, str]) -> bool:
    """Whether this process's environment lacks one of ``environment``'s values."""
    return any(os.environ.get(name) != value for name, value in environment.items())


def relaunch(ctx: click.Context, environment: Mapping[str, str]) -> int:
    """Run the command line again in a process whose environment is this one's with ``environment`` set; its exit
    code (the ``norma`` command does not return: it becomes that process).

    Raises:
        ConfigError: the command line is unknown (the CLI was not entered through ``main``), or this already is the
            relaunched process (its environment should have held ``environment``).
    """
    root = ctx.find_root().obj
    invocation = root.get(INVOCATION) if isinstance(root, dict) else None
    if not isinstance(invocation, Invocation) or invocation.process == "relaunched":
        names = ", ".join(sorted(environment))
        raise ConfigError(f"cannot start this command in the environment it needs ({names})")
    command = [sys.executable, "-c", _BOOT, json.dumps(sys.path), "norma", *invocation.argv]
    env = {**os.environ, **environment}
    sys.stdout.flush()
    sys.stderr.flush()
    if invocation.process == "own" and os.name == "posix":
        os.execve(sys.executable, command, env)
    return _run_child(command, env)


def _run_child(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` in a child process (a process group of its own) until it ends; SIGINT and SIGTERM sent to
    this process are passed on to it, once each (the caller's handlers come back after)."""
    import signal
    import subprocess

    group = 0 if os.name == "posix" else None  # Ctrl-C reaches it once, from here
    with subprocess.Popen(command, env=env, process_group=group) as child:

        def pass_on(signum: int, frame: object) -> None:
            child.send_signal(signum)

        previous = {signum: signal.signal(signum, pass_on) for signum in (signal.SIGINT, signal.SIGTERM)}
        try:
            code = child.wait()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    return code if code >= 0 else 128 - code  # ended by a signal: as a shell reports it
