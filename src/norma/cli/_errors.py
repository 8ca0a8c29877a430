"""How the CLI says what went wrong: ``norma: error: ...`` on stderr, one line an error, and inside GitHub Actions the
same errors as workflow commands, each an annotation on the line of the file it is about.

An error that points into a file starts as editors and CI problem matchers read it: ``FILE:LINE:COL: message``
(``FILE:LINE: message`` without a column), the field path first in the message when there is one. A rulebook's
problems follow its error line, one a line, each starting with its own ``FILE:LINE:COL:``.

With ``GITHUB_ACTIONS=true`` (the runner sets it for every step) each error is also written as
``::error file=FILE,line=L,col=C,title=norma::message`` (``file``, ``line`` and ``col`` when known; escaped as GitHub
documents), on stderr like the error itself; a rulebook's problems are one annotation each.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import click

from norma.errors import NormaError

__all__ = [
    "GITHUB_ACTIONS_ENV",
    "ErrorLine",
    "annotation",
    "describe",
    "echo_annotations",
    "echo_errors",
    "error_lines",
]

GITHUB_ACTIONS_ENV = "GITHUB_ACTIONS"
"""Set to ``true`` by GitHub Actions in every step: errors are then annotations too."""


@dataclass(frozen=True)
class ErrorLine:
    """One error as the CLI reports it: what it says, and where it is (each part when known)."""

    text: str
    """What is wrong (the field path first, when there is one), after the place."""
    file: str | None = None
    """The file (or ``<stdin>``) it is in, when it has a line there."""
    line: int | None = None
    """1-based line of ``file``."""
    column: int | None = None
    """1-based column on ``line``."""

    def __str__(self) -> str:
        place = ":".join(str(part) for part in (self.file, self.line, self.column) if part is not None)
        return f"{place}: {self.text}" if place else self.text

    @classmethod
    def of_record(cls, where: str, error: str) -> ErrorLine:
        """The error of a batch record named ``where`` (``FILE:LINE``; a Parquet row, ``FILE:row N``, has no line):
        ``error`` may start with ``where`` (and a column after it), as the record's reader wrote it."""
        file, _, number = where.rpartition(":")
        if not file or not number.isdigit():
            return cls(error if error.startswith(where) else f"{where}: {error}")
        if not error.startswith(f"{where}:"):  # the error does not name its record: it is the record's as a whole
            return cls(error, file, int(number))
        rest = error.removeprefix(f"{where}:")
        column, separator, text = rest.partition(": ")
        if column.isdigit() and separator:
            return cls(text, file, int(number), int(column))
        return cls(rest.lstrip(), file, int(number))


def describe(exc: NormaError) -> str:
    """The one line an error is reported with; malformed JSON reads the same whatever reported it (a rubric's
    error keeps the decoder's own words as its ``str()``, for synth-ai compatibility); an error listing problems
    says how many (they follow, one a line)."""
    problems = getattr(exc, "problems", None)
    if isinstance(problems, list) and problems:
        where = ":".join(part for part in (exc.source, exc.location) if part)
        hint = f" ({exc.hint})" if exc.hint else ""
        count = len(problems)
        return f"{where + ': ' if where else ''}{count} problem{'s' if count > 1 else ''} in the rulebook{hint}:"
    if isinstance(exc, json.JSONDecodeError):
        where = exc.position or f"line {exc.lineno}, column {exc.colno}"
        return f"{where}: not valid JSON: {exc.msg}"
    return str(exc)


def error_lines(exc: NormaError) -> list[ErrorLine]:
    """``exc`` as the lines the CLI prints: its own line, then each problem it lists (a rulebook's, each where
    it is)."""
    text = describe(exc)
    head = ErrorLine(text)
    if exc.source is not None and exc.line is not None and text.startswith(f"{exc.position}: "):
        head = ErrorLine(text.removeprefix(f"{exc.position}: "), exc.source, exc.line, exc.column)
    problems = getattr(exc, "problems", None)
    if not isinstance(problems, list) or not problems:
        return [head]
    details = []
    for problem in problems:
        line, column = getattr(problem, "line", None), getattr(problem, "column", None)
        if line is not None and exc.source is not None:
            details.append(ErrorLine(str(problem), exc.source, line, column))
        else:
            details.append(ErrorLine(f"{exc.source}: {problem}" if exc.source else str(problem)))
    return [head, *details]


def echo_errors(lines: Sequence[ErrorLine]) -> None:
    """Print ``lines`` on stderr: the first as ``norma: error: ...``, the others (a rulebook's problems) as they are;
    in GitHub Actions, then each as an annotation (the problems only, when there are)."""
    lines = [replace(line, text=_cli_hints(line.text)) for line in lines]
    for number, line in enumerate(lines):
        text = " ".join(str(line).split())
        click.echo(text if number else f"norma: error: {text}", err=True)
    echo_annotations(lines[1:] if len(lines) > 1 else lines)


_CLI_HINTS = {"MatchConfig.max_message_chars": "shorten the message, or split it into several messages"}
"""Library settings named in a hint (``raise MatchConfig.max_message_chars``) that the CLI has no option for, and
the hint the CLI gives instead."""


def _cli_hints(text: str) -> str:
    """``text`` with each hint naming a setting of :data:`_CLI_HINTS` (the parenthesis that holds it) replaced."""
    for setting, hint in _CLI_HINTS.items():
        text = re.sub(rf"\([^()]*{re.escape(setting)}[^()]*\)", f"({hint})", text)
    return text


def echo_annotations(lines: Sequence[ErrorLine]) -> None:
    """In GitHub Actions (``GITHUB_ACTIONS=true``), each of ``lines`` as an annotation, on stderr; else nothing."""
    if os.environ.get(GITHUB_ACTIONS_ENV) == "true":
        for line in lines:
            click.echo(annotation(line), err=True)


def annotation(line: ErrorLine) -> str:
    """``line`` as a GitHub Actions workflow command: ``::error file=F,line=L,col=C,title=norma::message``."""
    in_file = line.file is not None and line.line is not None and not line.file.startswith("<")  # not <stdin>
    properties = {"file": line.file, "line": line.line, "col": line.column} if in_file else {}
    given = "".join(f"{name}={_escape(str(value), in_property=True)}," for name, value in properties.items() if value)
    text = " ".join((line.text if in_file else str(line)).split())
    return f"::error {given}title=norma::{_escape(text)}"


def _escape(text: str, *, in_property: bool = False) -> str:
    """Escape as GitHub's workflow commands require: ``%``, CR and LF; in a property also ``:`` and ``,``."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text
