"""Rulebooks: a tenant's rules in one YAML or JSON file, validated as a whole before anything is written.

The format (docs/store.md)::

    format: norma.rulebook/v1      # optional; the only version so far
    tenant: acme-bank              # optional; `--tenant` / tenant_id= must agree with it when both are given
    description: Support rules     # optional
    rules:                         # required: a list of rules, each with the fields of norma.rules.Rule
      - id: refund-request
        condition_text: customer asks for a refund
        ...

A bare list of rules is accepted too. Every rule is checked and every problem reported (its index, the field, what
is wrong and, for a file, the line and column where the field is written) in one :class:`RulebookError`; nothing is
imported from a file with any problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict

from norma._positions import NodePositions, field_parts
from norma._safety import InputLimits, load_json, load_yaml
from norma.errors import InvalidInputError, LimitExceededError
from norma.rules._model import Rule, rule_problems, validate_tenant_id

__all__ = [
    "MAX_RULEBOOK_BYTES",
    "MAX_RULEBOOK_RULES",
    "MAX_RULEBOOK_VALUES",
    "RULEBOOK_FORMAT",
    "Rulebook",
    "RulebookError",
    "RulebookProblem",
    "dump_rulebook",
    "load_rulebook",
]

RULEBOOK_FORMAT = "norma.rulebook/v1"
MAX_RULEBOOK_RULES = 200_000
"""Most rules one rulebook may hold (``max_rules=`` raises or lowers it)."""
MAX_RULEBOOK_BYTES = 128 * 1024 * 1024
"""Largest rulebook file read, in bytes (``max_bytes=`` raises or lowers it)."""
MAX_RULEBOOK_VALUES = 64 * MAX_RULEBOOK_RULES
"""Most values (scalars, lists, mappings, after expanding YAML aliases) in a rulebook file: 64 per rule of the
largest rulebook, 12,800,000 (other documents: ``norma._safety.DEFAULT_LIMITS.max_values``, 2,000,000)."""
_TOP_KEYS = {"format", "tenant", "description", "rules"}


class RulebookProblem(BaseModel):
    """One thing wrong with one rule of a rulebook."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    index: int | None
    """0-based position of the rule in ``rules`` (None: the file itself)."""
    rule_id: str | None
    """The rule's id, when it has a usable one."""
    field: str
    """The field path inside the rule (``"priority"``, ``"tags[2]"``, ``"checks[1].pattern"``), or ``"rule"`` for
    the whole rule."""
    message: str
    """What is wrong."""
    line: int | None = None
    """1-based line of the rulebook file where the field is written (its value; its key when the value is empty;
    the rule, or the enclosing mapping, when the field is missing); None for a rulebook given as data."""
    column: int | None = None
    """1-based column (in characters) on ``line``."""

    def __str__(self) -> str:
        where = "rulebook" if self.index is None else f"rules[{self.index}]"
        named = f" ({self.rule_id})" if self.rule_id else ""
        return f"{where}{named}.{self.field}: {self.message}"


class RulebookError(InvalidInputError):
    """A rulebook with problems; ``problems`` lists every one (nothing was written), each with the line and column
    of its field when the rulebook was a file."""

    def __init__(self, problems: Sequence[RulebookProblem], *, source: str | None = None) -> None:
        self.problems = list(problems)
        shown = "; ".join(str(p) for p in self.problems[:10])
        more = f"; and {len(self.problems) - 10} more" if len(self.problems) > 10 else ""
        super().__init__(
            f"{len(self.problems)} problem(s) in the rulebook: {shown}{more}",
            source=source,
            hint="fix every rule listed; `norma docs store` shows the format",
        )


class Rulebook(BaseModel):
    """A validated rulebook: the tenant it names (if any), a description and its rules."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    tenant_id: str | None = None
    """The tenant the file names, or the one requested."""
    description: str = ""
    """Free text from the file."""
    rules: tuple[Rule, ...] = ()
    """The rules, in file order, with ``tenant_id`` set when a tenant is known."""


@dataclass(frozen=True)
class _Parsed:
    """A rulebook's data, where it came from, and (for a file) its text, to place problems in it."""

    data: Any
    where: str
    text: bytes | None = None
    is_json: bool = False

    def error(self, problems: list[RulebookProblem]) -> RulebookError:
        """The error listing ``problems``, each with the line and column of its field in the file's text."""
        positions = NodePositions.read(self.text, is_json=self.is_json) if self.text is not None else None
        if positions is not None:
            top = isinstance(self.data, Mapping)
            placed = []
            for problem in problems:
                path = [] if problem.field == "rule" else field_parts(problem.field)
                if problem.index is not None:
                    path = ["rules", problem.index, *path] if top else [problem.index, *path]
                line, column = positions.find(path)
                placed.append(problem.model_copy(update={"line": line, "column": column}))
            problems = placed
        return RulebookError(problems, source=self.where)


def _parse(source: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any], max_bytes: int) -> _Parsed:
    if isinstance(source, Mapping) or (isinstance(source, Sequence) and not isinstance(source, str)):
        return _Parsed(source, "<data>")
    if not isinstance(source, str | os.PathLike):
        raise InvalidInputError(
            f"a rulebook is a file path, a mapping or a list of rules, not {type(source).__name__}",
            hint="pass the path of a .yaml / .json rulebook, or its parsed data",
        )
    path = Path(source)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise LimitExceededError(
                f"the rulebook is {size:,} bytes, over the limit of {max_bytes:,}",
                source=str(path),
                hint="split it into several rulebooks and import each (from Python, max_bytes= raises the limit)",
            )
        text = path.read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read the rulebook: {exc.strerror}", source=str(path)) from exc
    limits = InputLimits(max_bytes=max_bytes, max_values=MAX_RULEBOOK_VALUES)
    if path.suffix.lower() == ".json":
        return _Parsed(load_json(text, source=str(path), limits=limits), str(path), text, is_json=True)
    return _Parsed(load_yaml(text, source=str(path), limits=limits), str(path), text)


def _printable(value: object) -> bool:
    """Whether ``value`` is text that can name a rule in an error message (valid Unicode, so it prints)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _validate(fields: dict[str, Any]) -> Rule:
    """A rule from ``fields``; pydantic's ValidationError (with a location per problem) when invalid.

    ``Rule(**fields)`` folds every problem into one message; validating into a blank instance, as pydantic's own
    ``BaseModel.__init__`` does, keeps each problem's field path.
    """
    blank = Rule.__new__(Rule)
    Rule.__pydantic_validator__.validate_python(fields, self_instance=blank)
    return Rule(**fields)


def load_rulebook(
    source: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any],
    *,
    tenant_id: str | None = None,
    max_rules: int = MAX_RULEBOOK_RULES,
    max_bytes: int = MAX_RULEBOOK_BYTES,
) -> Rulebook:
    """Read and validate a rulebook (a ``.yaml``/``.yml``/``.json`` file, or parsed data).

    ``tenant_id`` is the tenant the rules are for; a rulebook naming another tenant, or a rule whose ``tenant_id``
    is neither that tenant nor absent, is a problem. Raises :class:`RulebookError` listing every problem, or
    :class:`~norma.errors.LimitExceededError` (before any parsing or validation) for a file over ``max_bytes`` or
    more than ``max_rules`` rules.
    """
    parsed = _parse(source, max_bytes)
    data, where = parsed.data, parsed.where
    problems: list[RulebookProblem] = []
    description = ""
    file_tenant: str | None = None
    if isinstance(data, Mapping):
        unknown = sorted(str(k) for k in data if k not in _TOP_KEYS)
        if unknown:
            problems.append(RulebookProblem(index=None, rule_id=None, field=unknown[0], message="unknown key"))
        fmt = data.get("format", RULEBOOK_FORMAT)
        if fmt != RULEBOOK_FORMAT:
            problems.append(
                RulebookProblem(index=None, rule_id=None, field="format", message=f"must be {RULEBOOK_FORMAT!r}")
            )
        file_tenant = data.get("tenant")
        if file_tenant is not None and not isinstance(file_tenant, str):
            problems.append(RulebookProblem(index=None, rule_id=None, field="tenant", message="must be a string"))
            file_tenant = None
        description = str(data.get("description") or "")
        items = data.get("rules")
    else:
        items = data
    if not isinstance(items, list):
        empty = "the file is empty: write a list of rules, or a mapping with a 'rules' list"
        message = empty if data is None else "must be a list of rules"
        problems.append(RulebookProblem(index=None, rule_id=None, field="rules", message=message))
        raise parsed.error(problems)
    if len(items) > max_rules:
        raise LimitExceededError(
            f"the rulebook has {len(items):,} rules, over the limit of {max_rules:,}",
            source=where,
            location="rules",
            hint="split it into several rulebooks and import each (from Python, max_rules= raises the limit)",
        )
    if tenant_id is not None and file_tenant is not None and file_tenant != tenant_id:
        problems.append(
            RulebookProblem(
                index=None,
                rule_id=None,
                field="tenant",
                message=f"the file is for tenant {file_tenant!r}, not {tenant_id!r}",
            )
        )
    target = tenant_id if tenant_id is not None else file_tenant
    if target is not None:
        try:
            validate_tenant_id(target)
        except InvalidInputError as exc:
            problems.append(RulebookProblem(index=None, rule_id=None, field="tenant", message=exc.message))
            target = None
    rules: list[Rule] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(items):
        rule_id = item.get("id") if isinstance(item, Mapping) and _printable(item.get("id")) else None
        if not isinstance(item, Mapping):
            problems.append(
                RulebookProblem(index=index, rule_id=None, field="rule", message="must be a mapping of fields")
            )
            continue
        fields = {str(k): v for k, v in item.items()}
        if isinstance(rule_id, str):  # a duplicate id is reported with the rule's other problems, if any
            if rule_id in first_index:
                problems.append(
                    RulebookProblem(
                        index=index, rule_id=rule_id, field="id", message=f"duplicate of rules[{first_index[rule_id]}]"
                    )
                )
            else:
                first_index[rule_id] = index
        if target is not None:
            own = fields.get("tenant_id")
            if own is not None and own not in (target, "default"):
                problems.append(
                    RulebookProblem(
                        index=index, rule_id=rule_id, field="tenant_id", message=f"must be {target!r} or absent"
                    )
                )
                continue
            fields["tenant_id"] = target
        try:
            rule = _validate(fields)
        except pydantic.ValidationError as exc:
            for field, message in rule_problems(exc):
                problems.append(RulebookProblem(index=index, rule_id=rule_id, field=field, message=message))
            continue
        if rule.id in first_index and first_index[rule.id] != index:  # reported above
            continue
        rules.append(rule)
    if problems:
        raise parsed.error(problems)
    return Rulebook(tenant_id=target, description=description, rules=tuple(rules))


def dump_rulebook(
    rules: Sequence[Rule],
    *,
    tenant_id: str | None = None,
    description: str = "",
    fmt: Literal["yaml", "json"] = "yaml",
) -> str:
    """A rulebook text for ``rules`` that :func:`load_rulebook` reads back into equal rules.

    Fields equal to their defaults (and ``tenant_id``, which the file header carries) are left out.
    """
    entries = []
    for rule in rules:
        full = rule.to_dict()
        entry = {"id": full["id"], "condition_text": full["condition_text"]}
        defaults = Rule(id=rule.id, condition_text=rule.condition_text).to_dict()
        for key, value in full.items():
            if key in entry or key == "tenant_id" or value == defaults.get(key):
                continue
            entry[key] = value
        entries.append(entry)
    document: dict[str, Any] = {"format": RULEBOOK_FORMAT}
    if tenant_id is not None:
        document["tenant"] = tenant_id
    if description:
        document["description"] = description
    document["rules"] = entries
    if fmt == "json":
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


_RISKY = frozenset("\x85\u2028\u2029")
"""Line breaks PyYAML writes raw in plain, single-quoted and block scalars and then reads back folded or dropped
(``'x\\x85y'`` came back ``'xy'``); a string holding one is written double-quoted, where they are escapes."""


class _Dumper(yaml.SafeDumper):
    """SafeDumper whose strings read back exactly (see :data:`_RISKY`)."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if not _RISKY.isdisjoint(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    return dumper.represent_str(data)


_Dumper.add_representer(str, _represent_str)
