"""A batch stopped by a signal before its end (Ctrl-C, SIGTERM), and how every report format says so.

Its reports hold the records it finished and are marked, the same way whatever the command (``norma check``,
``match``, ``rubric eval``, ``audit``): JSON ``"incomplete": true`` and ``input_records`` (:func:`mark_incomplete`;
its counts are the finished records'), SARIF ``executionSuccessful: false`` with the signal, the exit code and a
notification (:func:`sarif_invocation`), JUnit one more ``<testsuite>`` whose test case is an ``<error>``
(:func:`junit_incomplete`: a CI page shows the run red), Markdown a line under the totals
(:func:`markdown_incomplete`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree as ET

__all__ = ["Incomplete", "junit_incomplete", "mark_incomplete", "markdown_incomplete", "sarif_invocation"]


@dataclass(frozen=True)
class Incomplete:
    """A batch stopped by a signal before its end: its reports hold the first :attr:`done` of its :attr:`total`
    records (the bad ones counted), and say so."""

    done: int
    """The records finished, in input order (each checked, or bad input)."""
    total: int
    """The records of the input (of the shard, with ``--shard``)."""
    signal: str = "SIGINT"
    """The signal that stopped it (``SIGINT``, ``SIGTERM``)."""
    exit_code: int = 130
    """What the command exits with (128 + the signal's number)."""
    verb: str = "checked"
    """What the batch does to a record (``checked``, ``matched``, ``evaluated``, ``audited``)."""

    def describe(self) -> str:
        """``interrupted (SIGINT) after 37 of 120 records: the other 83 were not checked``."""
        return (
            f"interrupted ({self.signal}) after {self.done} of {self.total} records: "
            f"the other {self.total - self.done} were not {self.verb}"
        )


def mark_incomplete(document: dict[str, Any], incomplete: Incomplete | None) -> dict[str, Any]:
    """A batch's JSON ``document`` with ``"incomplete": true`` and ``input_records`` first when the batch was stopped
    before its end (its counts are the finished records'); unchanged otherwise."""
    if incomplete is None:
        return document
    return {"incomplete": True, "input_records": incomplete.total, **document}


def sarif_invocation(incomplete: Incomplete | None) -> dict[str, Any]:
    """The SARIF invocation: successful, or stopped by a signal (its name, the exit code and why, as a
    notification)."""
    if incomplete is None:
        return {"executionSuccessful": True}
    return {
        "executionSuccessful": False,
        "exitCode": incomplete.exit_code,
        "exitSignalName": incomplete.signal,
        "toolExecutionNotifications": [{"level": "error", "message": {"text": incomplete.describe()}}],
    }


def junit_incomplete(root: ET.Element, incomplete: Incomplete | None, command: str) -> int:
    """One more ``<testsuite>`` named ``incomplete`` appended to ``root``, its test case an ``<error>``, when the
    batch was stopped; how many errors that adds (1 or 0)."""
    if incomplete is None:
        return 0
    suite = ET.SubElement(root, "testsuite", name="incomplete", tests="1", failures="0", errors="1", skipped="0")
    case = ET.SubElement(suite, "testcase", classname=f"norma.{command}", name="incomplete")
    ET.SubElement(case, "error", message=incomplete.describe(), type="interrupted")
    return 1


def markdown_incomplete(incomplete: Incomplete | None) -> list[str]:
    """The summary's lines about a batch stopped before its end (none when it was not)."""
    return [] if incomplete is None else ["", f"**Incomplete:** {incomplete.describe()}."]
