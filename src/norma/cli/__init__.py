"""The ``norma`` command line: thin adapters over the public API (see docs/cli.md)."""

from norma.cli._app import EXIT_FAILED, EXIT_OK, EXIT_USAGE, cli, main

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "cli", "main"]
