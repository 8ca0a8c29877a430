"""Rules from a file, through the one rulebook reader (:func:`norma.rules.load_rulebook`)."""

from __future__ import annotations

import os

from norma.rules import Rule, load_rulebook

__all__ = ["load_rules"]


def load_rules(path: str | os.PathLike[str]) -> list[Rule]:
    """The rules of a ``.yaml`` / ``.yml`` / ``.json`` rulebook: a list of rules or ``{rules: [...], ...}``.

    The file is read and checked as a whole by :func:`norma.rules.load_rulebook`: a bad file raises
    :class:`~norma.rules.RulebookError` (an :class:`~norma.errors.InvalidInputError`) naming the file and listing
    every problem (index, rule id, field); duplicate ids are problems too. When the file names a ``tenant``, its
    rules carry that ``tenant_id``.
    """
    return list(load_rulebook(path).rules)
