"""Rules from a file: a YAML or JSON list of rules, or a mapping with a ``rules`` list (a rulebook)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from norma._safety import load_json, load_yaml
from norma.errors import InvalidInputError
from norma.matching._models import Rule

__all__ = ["load_rules"]


def load_rules(path: str | os.PathLike[str]) -> list[Rule]:
    """The rules of a ``.yaml`` / ``.yml`` / ``.json`` file: a list of rules or ``{rules: [...], ...}``.

    Raises :class:`~norma.errors.InvalidInputError` naming the file and the rule (its index and id) on bad input;
    duplicate ids are refused here too.
    """
    source = str(path)
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read the rules file: {exc.strerror or exc}", source=source) from exc
    data: Any = load_json(text, source=source) if source.lower().endswith(".json") else load_yaml(text, source=source)
    if isinstance(data, dict):
        if "rules" not in data:
            raise InvalidInputError("a rules file mapping needs a 'rules' list", source=source, hint="rules: [...]")
        data = data["rules"]
    if not isinstance(data, list):
        raise InvalidInputError(
            f"a rules file holds a list of rules, not {type(data).__name__}", source=source, hint="rules: [...]"
        )
    rules: list[Rule] = []
    seen: set[str] = set()
    for index, item in enumerate(data):
        try:
            rule = Rule.from_mapping(item)
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"rules[{index}]: {exc.message}", source=source, location=f"rules[{index}]"
            ) from None
        if rule.id in seen:
            raise InvalidInputError(f"rules[{index}]: duplicate rule id {rule.id!r}", source=source, location=rule.id)
        seen.add(rule.id)
        rules.append(rule)
    return rules
