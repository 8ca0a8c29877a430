"""The examples of the documentation (``docs/*.md``), read as blocks to run, and the script that runs one page's.

Every fenced block of a page has a language. The examples are the ``python`` blocks and the shell blocks:
``console`` (command lines start with ``$ ``; the lines under one are its output), ``sh`` and ``bash`` (a script:
every line is a command, ``#`` starts a comment). The other languages are data or output shown (``yaml``,
``json``, ``text``...) and are not run.

An HTML comment right before a block (blank lines between allowed) tells the test how to treat it:

* ``<!-- docs-test: skip: REASON -->`` — not run, for the reason given (a running service, an LLM, the network...);
* ``<!-- docs-test: exit N -->`` — a shell block whose run ends with exit status N (a failing check: 1);
* ``<!-- docs-test: file NAME -->`` — the block is written to the file NAME (a rulebook, a test module), which the
  page's later blocks use.

A page's blocks run in order, in one folder where ``norma init --examples`` ran (a copy of it per page), with the
python blocks in one interpreter and one namespace (a later block uses an earlier block's names, as a reader
would); a shell block is one ``bash -e -o pipefail`` script (a ``console`` block: one per command). A console
block's output lines, when it shows any, must be in the command's output (stdout, then stderr), in that order;
``...`` on a line of its own stands for lines left out, within a line for any text.

:data:`RUNNER` is the script that runs one page's plan: it needs only the standard library, so the interpreter of a
fresh virtual environment (the wheel's) runs it, outside the repository.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "RUN",
    "RUNNER",
    "SHELL",
    "Block",
    "console_commands",
    "expected_output",
    "page_blocks",
    "plan",
    "problems",
    "run_page",
    "shown_in",
]

SHELL = ("console", "sh", "bash")
"""The languages of shell examples."""
RUN = ("python", *SHELL)
"""The languages of examples: a block in one of these runs unless the page says why not."""

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<language>[^`\s]*)[^`]*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<what>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: str
    """The page, relative to ``docs/``: ``check.md``, ``design/000-layout.md``."""
    line: int
    """The line of its opening fence (1-based)."""
    language: str
    code: str
    """Its text, the fence's indentation removed."""
    directive: str = ""
    """The comment before it, after ``docs-test:`` (``skip: needs a running norma serve``, ``exit 1``...)."""

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"

    @property
    def skip_reason(self) -> str | None:
        """Why it is not run, when the page says it is not."""
        kind, _, reason = self.directive.partition(":")
        return reason.strip() if kind.strip() == "skip" else None

    @property
    def file_name(self) -> str | None:
        """The file the page writes it to (``file NAME``)."""
        found = re.fullmatch(r"file\s+(\S+)", self.directive)
        return found.group(1) if found else None

    @property
    def expected_exit(self) -> int:
        found = re.fullmatch(r"exit\s+(\d+)", self.directive)
        return int(found.group(1)) if found else 0

    def directive_problem(self) -> str | None:
        """What is wrong with the block's comment, if anything."""
        if not self.directive:
            return None
        if self.skip_reason is not None:
            return None if self.skip_reason else "a skip without a reason"
        if self.file_name is not None:
            return None
        if re.fullmatch(r"exit\s+\d+", self.directive):
            return None if self.language in SHELL else "an exit status on a block that is not a shell example"
        return f"an unknown docs-test comment: {self.directive!r}"


def page_blocks(docs: Path, page: Path) -> list[Block]:
    """Every fenced block of ``page`` (a file under ``docs``), in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(docs).as_posix()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence = len(opening.group("indent")), opening.group("fence")
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        code = "".join(
            (line[indent:] if not line[:indent].strip() else line.lstrip()) + "\n" for line in lines[index + 1 : end]
        )
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        directive = _DIRECTIVE.match(lines[before]) if before >= 0 else None
        blocks.append(
            Block(name, index + 1, opening.group("language"), code, directive.group("what") if directive else "")
        )
        index = end + 1
    return blocks


def console_commands(code: str) -> list[tuple[str, list[str]]]:
    """A console block's commands (``$ `` and the lines a trailing backslash continues) and the output lines shown
    under each."""
    commands: list[tuple[str, list[str]]] = []
    continued = False
    for line in code.splitlines():
        if continued:
            command, shown = commands[-1]
            commands[-1] = (f"{command}\n{line}", shown)
        elif line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
        else:
            raise ValueError(f"output before the first command: {line!r}")
        continued = line.endswith("\\")
    return commands


def expected_output(shown: list[str]) -> list[str]:
    """The lines a console block shows under a command that its output must hold, in order (``...`` left out)."""
    return [line.rstrip() for line in shown if line.strip() and line.strip() != "..."]


def shown_in(expected: list[str], output: str) -> str | None:
    """None when every expected line is a line of ``output``, in order (``...`` in a line stands for any text);
    else the first one that is not."""
    lines = iter(line.rstrip() for line in output.splitlines())
    for wanted in expected:
        pattern = re.compile(".*".join(map(re.escape, wanted.split("..."))))
        if not any(pattern.fullmatch(line) for line in lines):
            return wanted
    return None


def plan(blocks: list[Block]) -> list[dict[str, object]]:
    """What the runner does for a page's blocks: the files it writes and the examples it runs, in order."""
    steps: list[dict[str, object]] = []
    for block in blocks:
        if block.skip_reason is not None:
            continue
        if block.file_name is not None:
            steps.append({"kind": "file", "line": block.line, "name": block.file_name, "code": block.code})
        elif block.language == "console":
            for command, _shown in console_commands(block.code):
                steps.append({"kind": "shell", "line": block.line, "code": command})
        elif block.language in SHELL:
            steps.append({"kind": "shell", "line": block.line, "code": block.code})
        elif block.language == "python":
            steps.append({"kind": "python", "line": block.line, "code": block.code})
    return steps


RUNNER = r'''
"""Run a page's examples (a JSON plan, argv[1]) in the current folder; write what happened to argv[2] (JSON)."""
import ast, asyncio, contextlib, inspect, io, json, resource, subprocess, sys, time, traceback


def cpu():
    usages = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(usage.ru_utime + usage.ru_stime for usage in usages)

steps = json.load(open(sys.argv[1], encoding="utf-8"))
namespace = {"__name__": "__main__"}
results = []
for step in steps:
    result = {"line": step["line"], "kind": step["kind"], "code": step["code"]}
    started, started_cpu = time.perf_counter(), cpu()
    if step["kind"] == "file":
        with open(step["name"], "w", encoding="utf-8") as handle:
            handle.write(step["code"])
        result["exit"] = 0
    elif step["kind"] == "shell":
        command = ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["code"]]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
            result.update(exit=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
        except subprocess.TimeoutExpired as timeout:
            result.update(exit=-1, stdout=str(timeout.stdout), stderr=f"timed out after {timeout.timeout} s")
    else:
        out, err = io.StringIO(), io.StringIO()
        try:
            code = compile(step["code"], f"<docs block at line {step['line']}>", "exec",
                           flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                awaited = eval(code, namespace)  # a coroutine when the block awaits at its top level
                if inspect.iscoroutine(awaited):
                    asyncio.run(awaited)
            result["exit"] = 0
        except BaseException:  # noqa: BLE001 - reported, with its traceback
            result["exit"] = 1
            err.write(traceback.format_exc())
        result.update(stdout=out.getvalue(), stderr=err.getvalue())
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["cpu_seconds"] = round(cpu() - started_cpu, 2)
    results.append(result)
json.dump(results, open(sys.argv[2], "w", encoding="utf-8"))
'''
"""The runner: ``python RUNNER plan.json results.json``, in the page's folder."""


def run_page(blocks: list[Block], folder: Path, python: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Run the examples of one page's ``blocks`` in ``folder`` with ``python``: what each step did, in order."""
    (folder / ".docs-plan.json").write_text(json.dumps(plan(blocks)), encoding="utf-8")
    runner = folder / ".docs-runner.py"
    runner.write_text(RUNNER, encoding="utf-8")
    command = [str(python), str(runner), ".docs-plan.json", ".docs-results.json"]
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"the runner failed in {folder}: {proc.stderr}")
    results: list[dict[str, Any]] = json.loads((folder / ".docs-results.json").read_text(encoding="utf-8"))
    return results


def problems(blocks: list[Block], results: list[dict[str, Any]]) -> list[str]:
    """What went otherwise than the page says: a step that did not run, an unexpected exit status, output a
    console block shows that did not come."""
    found = []
    by_line: dict[int, list[dict[str, Any]]] = {}
    for result in results:
        by_line.setdefault(result["line"], []).append(result)
    for block in blocks:
        if block.skip_reason is not None or block.file_name is not None or block.language not in RUN:
            continue
        ran = by_line.get(block.line, [])
        if block.language == "console":
            shown = [expected_output(lines) for _, lines in console_commands(block.code)]
        else:
            shown = [[]]
        if len(ran) != len(shown):
            found.append(f"{block.where}: {len(ran)} steps ran, {len(shown)} expected")
            continue
        for result, expected in zip(ran, shown, strict=True):
            where = f"{block.where} ({result['code'].splitlines()[0] if result['code'].strip() else 'empty'})"
            output = result.get("stdout", "") + result.get("stderr", "")
            if result["exit"] != block.expected_exit:
                found.append(f"{where}: exit {result['exit']}, expected {block.expected_exit}\n{output[-4000:]}")
            elif (missing := shown_in(expected, output)) is not None:
                found.append(f"{where}: the output has no line {missing!r} (in this order)\n{output[-4000:]}")
    return found
