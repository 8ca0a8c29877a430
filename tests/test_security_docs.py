"""docs/security.md and the code agree on every limit (issue 23, item 8: the page said 2,000,000 values where
rulebook files were refused at 12,800,000): each row of the Limits table names its constant, and this reads the
figure from the page and the value from the code."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest

from tests.conftest import REPO

SECURITY = REPO / "docs" / "security.md"
UNITS = {"MiB": 1024 * 1024, "KiB": 1024, "characters": 1}


def _limits_table() -> list[tuple[str, str, str]]:
    text = SECURITY.read_text(encoding="utf-8")
    section = text.split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[2].startswith("`norma."):
            rows.append((cells[0], cells[1], cells[2].strip("`")))
    return rows


def _figure(text: str) -> int:
    match = re.fullmatch(r"([\d,]+)(?: (\w+))?", text)
    assert match, f"cannot read the figure {text!r}"
    return int(match.group(1).replace(",", "")) * UNITS.get(match.group(2) or "characters", 0)


def _constant(dotted: str) -> Any:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            fields = getattr(value, "model_fields", None)
            value = fields[name].default if fields and name in fields else getattr(value, name)
        return value
    raise AssertionError(f"no module in {dotted}")


ROWS = _limits_table()


def test_the_limits_table_is_there_and_names_the_limits_of_the_issue() -> None:
    constants = {row[2] for row in ROWS}
    assert {
        "norma._safety.DEFAULT_LIMITS.max_values",
        "norma.rules.MAX_RULEBOOK_VALUES",
        "norma.rules.MAX_METADATA_DEPTH",
        "norma._safety.DEFAULT_LIMITS.max_depth",
    } <= constants


@pytest.mark.parametrize(("what", "figure", "constant"), ROWS, ids=[row[2] for row in ROWS])
def test_every_documented_limit_is_the_codes(what: str, figure: str, constant: str) -> None:
    assert _figure(figure) == _constant(constant), f"docs/security.md says {figure} for {what}"


def test_the_rulebook_value_count_is_what_a_rulebook_file_is_read_with(tmp_path: Any) -> None:
    """The constant is the one the reader uses: a file one value over it is refused naming that figure."""
    from norma.errors import LimitExceededError
    from norma.rules import MAX_RULEBOOK_VALUES, load_rulebook

    levels = ["l0: &l0 [" + ", ".join(["1"] * 10) + "]"]
    levels += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 8)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join([*levels, "rules: []"]), encoding="utf-8")
    with pytest.raises(LimitExceededError, match=f"more than {MAX_RULEBOOK_VALUES:,} values"):
        load_rulebook(path)
    documented = {row[2]: _figure(row[1]) for row in ROWS}["norma.rules.MAX_RULEBOOK_VALUES"]
    assert documented == MAX_RULEBOOK_VALUES
