"""Rubric errors that also keep the builtin type the compatible loaders raised.

Every class here is a :class:`~norma.errors.RubricError` (so a ``ValueError``), carries ``source`` and
``location``, and *also* derives from the exception synth-ai's loaders let through in the same situation, so
existing ``except json.JSONDecodeError`` / ``except yaml.YAMLError`` / ``except FileNotFoundError`` blocks keep
working after the switch to norma.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from norma.errors import RubricError

__all__ = [
    "BackendJudgeFormatError",
    "RubricFileError",
    "RubricFileMissingError",
    "RubricIsADirectoryError",
    "RubricJSONError",
    "RubricPermissionError",
    "RubricYAMLError",
]


class RubricFileError(RubricError, OSError):
    """A rubric file that cannot be read: missing, a directory, unreadable, too large or not UTF-8 text."""

    def __init__(self, message: str, *, source: str | None = None, hint: str | None = None) -> None:
        super().__init__(message, source=source, hint=hint)
        self.filename = source


class RubricFileMissingError(RubricFileError, FileNotFoundError):
    """The rubric file does not exist (also a ``FileNotFoundError``)."""


class RubricIsADirectoryError(RubricFileError, IsADirectoryError):
    """The rubric path names a directory (also an ``IsADirectoryError``)."""


class RubricPermissionError(RubricFileError, PermissionError):
    """The rubric file cannot be read by this user (also a ``PermissionError``)."""


class RubricJSONError(json.JSONDecodeError, RubricError):
    """Malformed JSON (also a ``json.JSONDecodeError``); ``str()`` holds the decoder's own message."""

    def __init__(self, error: json.JSONDecodeError, *, source: str | None) -> None:
        json.JSONDecodeError.__init__(self, error.msg, error.doc, error.pos)
        self.message = str(error)
        self.source = source
        self.location = None
        self.line = error.lineno
        self.column = error.colno
        self.hint = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_json_error, (self.msg, self.doc, self.pos, self.source))


def _rebuild_json_error(msg: str, doc: str, pos: int, source: str | None) -> RubricJSONError:
    return RubricJSONError(json.JSONDecodeError(msg, doc, pos), source=source)


class RubricYAMLError(RubricError, yaml.YAMLError):
    """Malformed YAML (also a ``yaml.YAMLError``), with the line and column of the problem."""


class BackendJudgeFormatError(RubricError):
    """The data is a backend judge rubric (``event``/``outcome`` keys), not a task rubric."""
