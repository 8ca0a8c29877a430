"""The error tree: one root, documented, with what / where / what-to-do on one line."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import re

import pytest

import norma
import norma.errors as errors
from norma.errors import (
    AuthenticationError,
    BackendError,
    ConfigError,
    ForbiddenError,
    InvalidInputError,
    MissingDependencyError,
    NormaError,
    RubricError,
    StoreError,
)


@pytest.mark.parametrize(
    "cls", [InvalidInputError, RubricError, ConfigError, MissingDependencyError, StoreError, BackendError]
)
def test_every_error_derives_from_the_root_and_is_documented(cls: type[NormaError]) -> None:
    assert issubclass(cls, NormaError)
    assert cls.__name__ in (errors.__doc__ or "")


def test_input_errors_are_value_errors_for_compatible_callers() -> None:
    assert issubclass(InvalidInputError, ValueError)
    assert issubclass(RubricError, ValueError)
    assert issubclass(MissingDependencyError, ImportError)


def test_message_names_source_location_and_hint_on_one_line() -> None:
    err = InvalidInputError(
        "weight must be positive\n(got -1)", source="r.json", location="criteria[0].weight", hint="use 0.5"
    )
    assert str(err) == "r.json:criteria[0].weight: weight must be positive (got -1) (use 0.5)"
    assert (err.source, err.location, err.hint) == ("r.json", "criteria[0].weight", "use 0.5")


def test_message_without_where_is_just_the_message() -> None:
    assert str(ConfigError("NORMA_MODEL_DIR is empty")) == "NORMA_MODEL_DIR is empty"


def test_missing_dependency_carries_the_install_command() -> None:
    err = MissingDependencyError("PostgreSQL store", extra="postgres", install="pip install 'norma-rules[postgres]'")
    assert err.extra == "postgres"
    assert "pip install 'norma-rules[postgres]'" in str(err)
    assert "PostgreSQL store" in str(err)


def _raise(name: str) -> None:
    raise ImportError(f"cannot import {name}")


def _every_norma_error() -> list[type[NormaError]]:
    """Every NormaError subclass defined anywhere in norma (every module imported first, none skipped)."""
    for info in pkgutil.walk_packages(norma.__path__, "norma.", onerror=_raise):
        importlib.import_module(info.name)
    found: dict[str, type[NormaError]] = {}
    pending: list[type[NormaError]] = [NormaError]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("norma."):
                found[f"{sub.__module__}.{sub.__qualname__}"] = sub
                pending.append(sub)
    return [found[name] for name in sorted(found)]


EVERY_ERROR = _every_norma_error()


def _tree_line(name: str) -> str | None:
    for line in (errors.__doc__ or "").splitlines():
        if re.search(rf"[─ ]{name}\b", line) and not line.lstrip().startswith(("Each", "Where")):
            return line
    return None


def test_the_walk_finds_errors_outside_errors_py() -> None:
    modules = {cls.__module__ for cls in EVERY_ERROR}
    assert "norma.errors" in modules
    assert {"norma.rubrics._errors", "norma.llm._faults", "norma.service._errors", "norma.rules._rulebook"} <= modules


@pytest.mark.parametrize("cls", EVERY_ERROR, ids=lambda cls: cls.__name__)
def test_every_norma_error_is_in_the_tree(cls: type[NormaError]) -> None:
    assert _tree_line(cls.__name__) is not None, f"{cls.__module__}.{cls.__name__} is missing from errors.__doc__"


@pytest.mark.parametrize("cls", EVERY_ERROR, ids=lambda cls: cls.__name__)
def test_errors_outside_errors_py_name_the_package_that_exports_them(cls: type[NormaError]) -> None:
    line = _tree_line(cls.__name__) or ""
    named = re.search(rf"{cls.__name__} \((norma(?:\.\w+)+)\)", line)
    if cls.__module__ == "norma.errors":
        assert named is None
        assert getattr(norma, cls.__name__) is cls  # the root package exports every error of errors.py
        return
    assert named is not None, f"the tree does not say where {cls.__name__} lives: {line!r}"
    package = named.group(1)
    assert getattr(importlib.import_module(package), cls.__name__, None) is cls


def test_every_error_the_service_answers_is_a_norma_error_with_its_status() -> None:
    from norma.service import ERROR_STATUS, RequestTimeoutError, UnauthorizedError, status_for

    assert all(issubclass(cls, NormaError) for cls in ERROR_STATUS)
    assert status_for(UnauthorizedError()) == 401
    assert status_for(ForbiddenError("no")) == 403
    assert status_for(RequestTimeoutError(30)) == 503
    assert issubclass(UnauthorizedError, AuthenticationError)
