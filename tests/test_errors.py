"""The error tree: one root, documented, with what / where / what-to-do on one line."""

from __future__ import annotations

import pytest

import norma.errors as errors
from norma.errors import (
    BackendError,
    ConfigError,
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
    err = MissingDependencyError("PostgreSQL store", extra="postgres", install="pip install 'norma[postgres]'")
    assert err.extra == "postgres"
    assert "pip install 'norma[postgres]'" in str(err)
    assert "PostgreSQL store" in str(err)
