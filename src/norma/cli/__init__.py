"""The ``norma`` command line: thin adapters over the public API (see docs/cli.md)."""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.cli._app import EXIT_FAILED as EXIT_FAILED
    from norma.cli._app import EXIT_OK as EXIT_OK
    from norma.cli._app import EXIT_USAGE as EXIT_USAGE
    from norma.cli._app import cli as cli
    from norma.cli._app import main as main

_PUBLIC: dict[str, str] = {}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "cli": "_app",
    "EXIT_FAILED": "_app",
    "EXIT_OK": "_app",
    "EXIT_USAGE": "_app",
    "main": "_app",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
