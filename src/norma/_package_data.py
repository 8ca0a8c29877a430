"""The files norma ships besides its code: the examples ``norma demo``, ``norma serve --demo`` and ``norma init``
use, and the documentation ``norma docs`` shows.

A wheel holds them in ``norma/_examples`` and ``norma/_docs`` (pyproject.toml copies the repository's
``examples/`` and ``docs/`` there when it builds one); a source checkout (an editable install, or
``PYTHONPATH=src``) reads ``examples/`` and ``docs/`` next to ``src/``. The repository keeps one copy of the files.
"""

from __future__ import annotations

from pathlib import Path

from norma.errors import ConfigError

__all__ = ["PACKAGED_DOCS", "PACKAGED_EXAMPLES", "docs_folder", "examples_folder"]

PACKAGED_EXAMPLES = Path(__file__).resolve().parent / "_examples"
"""Where an installed wheel keeps the examples (absent in a source checkout)."""

_CHECKOUT_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

PACKAGED_DOCS = Path(__file__).resolve().parent / "_docs"
"""Where an installed wheel keeps the documentation (absent in a source checkout)."""

_CHECKOUT_DOCS = Path(__file__).resolve().parents[2] / "docs"


def examples_folder() -> Path:
    """The examples norma ships: the installed package's, else the source checkout's.

    A folder counts when it holds ``rulebooks/``, so an unrelated ``examples/`` beside an installed package's
    ``site-packages`` is never taken for norma's.

    Raises:
        ConfigError: neither is there (a package built without them).
    """
    for candidate in (PACKAGED_EXAMPLES, _CHECKOUT_EXAMPLES):
        if (candidate / "rulebooks").is_dir():
            return candidate
    raise ConfigError(
        "norma's example files are not installed",
        source=str(PACKAGED_EXAMPLES),
        hint="pass --examples DIR, or reinstall norma-rules from its wheel, which ships them",
    )


def docs_folder() -> Path:
    """The documentation norma ships (``norma docs``): the installed package's, else the source checkout's.

    A folder counts when it holds ``cli.md``, so an unrelated ``docs/`` beside ``site-packages`` is never taken.

    Raises:
        ConfigError: neither is there (a package built without them).
    """
    for candidate in (PACKAGED_DOCS, _CHECKOUT_DOCS):
        if (candidate / "cli.md").is_file():
            return candidate
    raise ConfigError(
        "norma's documentation is not installed",
        source=str(PACKAGED_DOCS),
        hint="reinstall norma-rules from its wheel, which ships it",
    )
