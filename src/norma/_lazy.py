"""A package's names from one table, loaded on first use (PEP 562): what every ``norma`` package's ``__init__`` uses.

A package writes ``_PUBLIC`` (what a user calls: ``__all__``) and ``_INTERNAL`` (what norma's own command line,
service, MCP server and scripts use: importable from the package, not in ``__all__``), each a mapping from a name
to the module that defines it (``"_models"``: a module of the package; ``"norma.rules"``: another package; with
``":Other"``, the name is an alias of ``Other`` there; with ``":*"``, the name is that module itself, for a script
that times or switches an internal stage), then::

    __all__, __getattr__, __dir__ = exports(globals(), _PUBLIC, _INTERNAL)

The ``if TYPE_CHECKING:`` imports of the ``__init__`` are what mypy reads; ``tests/test_public_api.py`` checks that
they bind exactly the names of the two tables.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(
    namespace: dict[str, Any], public: Mapping[str, str], internal: Mapping[str, str]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__`` (the public names, sorted), the package's ``__getattr__`` (a name of either table, imported on first
    use and kept) and its ``__dir__``."""
    package: str = namespace["__name__"]
    table = {**internal, **public}

    def load(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = where.partition(":")
        found = importlib.import_module(module if module.startswith("norma") else f"{package}.{module}")
        value = found if attribute == "*" else getattr(found, attribute or name)
        namespace[name] = value
        return value

    def listing() -> list[str]:
        return sorted({*namespace, *public})

    return sorted(public), load, listing
