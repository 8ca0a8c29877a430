"""The public surface is explicit: every package's ``__all__`` is sorted, importable and complete."""

from __future__ import annotations
import __future__

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import norma


def _packages() -> list[str]:
    names = ["norma"]
    for info in pkgutil.walk_packages(norma.__path__, "norma."):
        leaf = info.name.rsplit(".", 1)[-1]
        if info.ispkg and not leaf.startswith("_"):
            names.append(info.name)
    return sorted(names)


def _public_names(module: ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value) and not isinstance(value, __future__._Feature)
    }


PACKAGES = _packages()


def test_subpackages_are_found() -> None:
    assert "norma" in PACKAGES
    assert "norma.cli" in PACKAGES


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_complete_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    exported = set(module.__all__)
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what the package does not define: {missing}"
    unexported = _public_names(module) - exported
    assert not unexported, f"{name} defines public names missing from __all__: {sorted(unexported)}"


def test_version_is_exported() -> None:
    assert norma.__version__.count(".") == 2
    assert "__version__" in norma.__all__
