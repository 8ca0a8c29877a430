"""Checking a rubric: valid or not, with every problem as a field path and a message.

:func:`validate_rubric` is the one verdict ``norma rubric validate`` and the service's ``POST /v1/rubrics/validate``
give: a rubric that can be read but breaks the format (a bad field, the backend judge format) is ``valid=False``
with its issues; only input that cannot be read at all (a missing file, malformed JSON/YAML) raises.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict

from norma.errors import RubricError
from norma.rubrics._errors import BackendJudgeFormatError
from norma.rubrics._loaders import _load, read_rubric_file
from norma.rubrics._models import Rubric
from norma.rubrics._strict import StrictRubric, read_strict_rubric_file

__all__ = ["RubricValidity", "RubricIssue", "validate_rubric", "check_rubric_file", "field_path", "validation_issues"]


class RubricIssue(BaseModel):
    """One problem in a rubric: where (a field path, ``""`` for the whole rubric) and what."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    """Field path such as ``criteria[1].weight``; empty for the rubric as a whole."""

    message: str
    """What is wrong there."""


class RubricValidity(BaseModel):
    """The verdict of :func:`validate_rubric` on one rubric."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str | None
    """The file checked; None for a rubric given as a mapping."""

    strict: bool
    """Whether the strict format was checked."""

    valid: bool
    """Whether the rubric is valid."""

    issues: list[RubricIssue]
    """What is wrong, in pydantic's order; empty when valid."""

    criteria: int
    """Number of criteria of a valid rubric (0 when invalid)."""


def field_path(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a field path: ``("criteria", 1, "weight")`` -> ``criteria[1].weight``."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def validation_issues(error: pydantic.ValidationError) -> list[RubricIssue]:
    """The problems of a pydantic ``ValidationError`` as field paths and messages."""
    issues = []
    for detail in error.errors(include_url=False):
        message = str(detail["msg"]).removeprefix("Value error, ")
        issues.append(RubricIssue(path=field_path(detail["loc"]), message=message))
    return issues


def _strict_data(path: Path) -> dict[str, Any]:
    data = read_strict_rubric_file(path)
    if not isinstance(data, dict):  # validate_rubric_file says TypeError, as synth-ai does; a check refuses it
        raise RubricError("Rubric text must decode to a mapping", source=str(path))
    return data


def validate_rubric(source: str | os.PathLike[str] | Mapping[str, Any], *, strict: bool = False) -> RubricValidity:
    """Check a rubric file (JSON or YAML) or a rubric mapping against the flexible format, or the strict one.

    Args:
        source: a file's path (a string is always a path here, never rubric text or a URL), or the rubric as a
            mapping (what a JSON request body holds).
        strict: check the strict verifier format (weights in (0, 1] summing to 1) instead of the flexible one.

    Returns:
        The verdict; a rubric that can be read but breaks the format, or that is in the backend judge format, is
        ``valid=False`` with its issues.

    Raises:
        RubricError: a file that cannot be read or parsed into a mapping (missing, a directory, too large,
            malformed JSON/YAML, not a mapping).
    """
    file = None if isinstance(source, Mapping) else str(source)
    try:
        rubric: Rubric | StrictRubric | None
        if strict:
            data = dict(source) if isinstance(source, Mapping) else _strict_data(Path(source))
            rubric = StrictRubric.model_validate(data)
        elif isinstance(source, Mapping):
            rubric = _load(source)
        else:
            path = Path(source)
            read_rubric_file(path)  # refuse missing files rather than read their name as rubric text
            rubric = _load(path)  # a file that is not a mapping cannot be read as a rubric: RubricError
    except pydantic.ValidationError as exc:
        return RubricValidity(file=file, strict=strict, valid=False, issues=validation_issues(exc), criteria=0)
    except BackendJudgeFormatError as exc:
        issue = RubricIssue(path="", message=exc.message)
        return RubricValidity(file=file, strict=strict, valid=False, issues=[issue], criteria=0)
    count = len(rubric.criteria) if rubric is not None else 0
    return RubricValidity(file=file, strict=strict, valid=True, issues=[], criteria=count)


def check_rubric_file(path: str | os.PathLike[str], *, strict: bool = False) -> RubricValidity:
    """:func:`validate_rubric` on one file (JSON or YAML): the name CI scripts have used since the first release."""
    return validate_rubric(path, strict=strict)
