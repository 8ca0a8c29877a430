"""Records of a batch that could not be read or run (bad input: the command exits 2), in the job summary and JUnit.

A bad record is ``(where, error)``: its place (``file:line`` of a JSON Lines record, or a file's name) and why it
has no report. The Markdown summary lists them after the totals, the JUnit document gives each an ``<error>`` test
case, so that a CI page shows what the step's log says on stderr. Without bad records the reports are unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from xml.etree import ElementTree as ET

__all__ = ["BadRecord", "bad_junit", "bad_markdown"]

BadRecord = tuple[str, str]
"""``(where, error)`` of a record that has no report."""

_RECORD = re.compile(r"(?P<path>.+):(?P<line>[0-9]+)")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _reason(where: str, error: str) -> str:
    """The error without the record's place in front of it (the table gives it)."""
    return error[len(where) :].lstrip(": ") if error.startswith(where) else error


def bad_markdown(bad: Sequence[BadRecord], verb: str) -> list[str]:
    """The summary's lines about the bad records (none without any): a count and a table of file, line, error."""
    if not bad:
        return []
    count = f"{len(bad)} bad {'record' if len(bad) == 1 else 'records'}, not {verb} (bad input: exit 2):"
    rows = []
    for where, error in bad:
        record = _RECORD.fullmatch(where)
        path, line = (record["path"], record["line"]) if record else (where, "")
        rows.append(f"| {_cell(path)} | {line} | {_cell(_reason(where, error))} |")
    return [count, "", "| file | line | error |", "|---|---|---|", *rows]


def bad_junit(root: ET.Element, bad: Sequence[BadRecord], command: str) -> int:
    """Append one ``<testsuite>`` per bad record to ``root``, its test case an ``<error>``; return how many."""
    for where, error in bad:
        suite = ET.SubElement(root, "testsuite", name=where, tests="1", failures="0", errors="1", skipped="0")
        case = ET.SubElement(suite, "testcase", classname=f"norma.{command}.{where}", name="bad record")
        element = ET.SubElement(case, "error", message=_reason(where, error), type="bad input")
        element.text = error
    return len(bad)
