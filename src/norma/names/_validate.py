"""Input checks shared by the names scoring functions.

Every public function of ``norma.names`` checks its arguments here first, so that a bad input raises
:class:`~norma.errors.InvalidInputError` naming the argument (and the index inside a list) instead of a
``TypeError`` deep inside the scoring code. The checks are cheap: they run on every call of the hot path. The checks
of a query's labels (distributions, ``rule_based``) are in :mod:`norma.names._labels`, with the labels' model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from norma.errors import InvalidInputError

__all__ = ["check_count", "check_fraction", "check_str", "check_str_list"]


def check_str(value: object, what: str) -> str:
    """Return ``value`` if it is a ``str``; raise :class:`InvalidInputError` otherwise."""
    if not isinstance(value, str):
        raise InvalidInputError(
            f"{what} must be a string, not {type(value).__name__}",
            location=what,
            hint="pass names and variations as str",
        )
    return value


def check_str_list(values: object, what: str) -> list[str]:
    """Return ``values`` as a list of ``str``; a bare string or a non-string item is an error."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InvalidInputError(
            f"{what} must be a list of strings, not {type(values).__name__}",
            location=what,
            hint="pass a list such as ['Jon Smith', 'John Smyth']",
        )
    out = list(values)
    for index, item in enumerate(out):
        if not isinstance(item, str):
            raise InvalidInputError(
                f"{what}[{index}] must be a string, not {type(item).__name__}",
                location=f"{what}[{index}]",
                hint="every item must be a str",
            )
    return out


def _is_real(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_fraction(value: object, what: str, *, upper: float = 1.0) -> float:
    """Return ``value`` as a float in ``[0, upper]``; NaN, infinities, bools and non-numbers are errors."""
    if not _is_real(value):
        raise InvalidInputError(
            f"{what} must be a number, not {type(value).__name__}",
            location=what,
            hint=f"use a number in [0, {upper:g}]",
        )
    number = float(value)  # type: ignore[arg-type]
    if math.isnan(number) or not 0.0 <= number <= upper:
        raise InvalidInputError(
            f"{what} must be a number in [0, {upper:g}], got {value!r}",
            location=what,
            hint=f"use 0 <= {what} <= {upper:g}",
        )
    return number


def check_count(value: object, what: str) -> int | float:
    """Return an expected count: a finite, non-negative int or float (kept as given: the formulas use it raw)."""
    if not _is_real(value):
        raise InvalidInputError(
            f"{what} must be a number, not {type(value).__name__}", location=what, hint="use an int such as 10"
        )
    number: int | float = value  # type: ignore[assignment]
    if (isinstance(number, float) and not math.isfinite(number)) or number < 0:
        raise InvalidInputError(
            f"{what} must be a finite number >= 0, got {value!r}", location=what, hint="use an int such as 10"
        )
    return number
