"""The files norma ships besides its code: the examples ``norma demo`` and ``norma serve --demo`` walk.

A wheel holds them in ``norma/_examples`` (pyproject.toml copies the repository's ``examples/`` there when it
builds one); a source checkout (an editable install, or ``PYTHONPATH=src``) reads ``examples/`` next to ``src/``.
The repository keeps one copy of the files.
"""

from __future__ import annotations

from pathlib import Path

from norma.errors import ConfigError

__all__ = ["PACKAGED_EXAMPLES", "examples_folder"]

PACKAGED_EXAMPLES = Path(__file__).resolve().parent / "_examples"
"""Where an installed wheel keeps the examples (absent in a source checkout)."""

_CHECKOUT_EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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
