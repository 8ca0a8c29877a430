"""``norma rules diff-git RULEBOOK... --turns FILE``: what each rulebook's change since a git commit does to recorded
turns. OLD is the rulebook as it is at ``--against REF`` (default ``HEAD``, read with ``git show``), NEW the file as
it is now (in a pre-commit hook: as staged); the turns are checked against both by :meth:`norma.Norma.diff`
and rendered as ``norma rules diff`` renders them (``_rules_diff_output.py``).

The pre-commit hook ``norma-rules-diff`` and the GitHub Action's ``command: diff`` run it (docs/ci.md). A rulebook
that is the same at REF is not compared (nothing changed); one that REF does not have is new, with nothing to
compare it with: it is said, and it passes (``norma check --batch`` checks turns against it). Each is said on
stderr, and in the Markdown output; JSON and JUnit are written only for a rulebook that was compared.
Exit 0, 1 when ``--fail-on`` forbids what a change does, 2 on bad input.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from norma.cli._batch_run import allow_empty_option
from norma.cli._rules_diff import fail_on_option, limit_option, turns_option

if TYPE_CHECKING:
    from norma.turns import Norma, RulebookDiff

__all__ = ["diff_git_command"]

FORMATS = ("table", "json", "markdown", "junit")
"""What ``--format`` and ``--report FORMAT=FILE`` write (those of ``norma rules diff``)."""

_GIT_TIMEOUT = 60.0
"""Seconds any one git command may take."""


def _reports(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> list[tuple[str, Path]]:
    specs = []
    for spec in value:
        fmt, sep, file = spec.partition("=")
        if not sep or fmt not in FORMATS or not file:
            raise click.BadParameter(
                f"{spec!r} is not FORMAT=FILE with FORMAT one of {', '.join(FORMATS)} (e.g. --report junit=diff.xml)",
                ctx,
                param,
            )
        specs.append((fmt, Path(file)))
    return specs


@click.command("diff-git")
@click.argument("rulebooks", nargs=-1, required=True, metavar="RULEBOOK...", type=click.Path(path_type=Path))
@turns_option
@click.option(
    "--against",
    "ref",
    default="HEAD",
    show_default=True,
    metavar="REF",
    help="The git commit (a branch, tag or SHA) whose version of each RULEBOOK is OLD.",
)
@allow_empty_option("records", "compares nothing", file="A turns FILE")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default=None,
    help="What goes to stdout: a human table (default), JSON, a Markdown pull request comment or JUnit XML (JSON "
    "and JUnit: one RULEBOOK only).",
)
@click.option(
    "--report",
    "reports",
    multiple=True,
    callback=_reports,
    metavar="FORMAT=FILE",
    help="Also write the diff in FORMAT (table, json, markdown, junit) to FILE; repeatable; one RULEBOOK only.",
)
@fail_on_option
@limit_option
@click.pass_context
def diff_git_command(
    ctx: click.Context,
    /,
    rulebooks: Sequence[Path],
    turns_file: str,
    ref: str,
    allow_empty: bool,
    output_format: str | None,
    reports: list[tuple[str, Path]],
    fail_on: str,
    limit: int,
) -> int:
    """Check recorded turns against each rulebook as it is now and as it was at a git commit (--against, HEAD).

    What the change of each RULEBOOK since REF does to the turns of --turns, as norma rules diff reports it (OLD:
    the rulebook at REF, NEW: the file now; in a pre-commit hook, as staged). A rulebook the same at REF is not
    compared; one REF does not have is new, with nothing to compare: both pass. Exit 0, 1 when --fail-on forbids
    what a change does, 2 on bad input.
    """
    fmt = output_format or ((ctx.find_root().obj or {}).get("format") or "table")
    if len(rulebooks) > 1 and (reports or fmt in ("json", "junit")):
        what = "--report" if reports else f"--format {fmt}"
        raise click.UsageError(f"{what} takes one RULEBOOK, not {len(rulebooks)}: run the command once per rulebook")
    name, lines, turns = _turns(turns_file, allow_empty)
    repo = _Repo.of(Path.cwd())
    commit = repo.commit(ref)
    judge: Any = "user"  # the LLM of $NORMA_LLM_URL, votes in the user cache; then shared by every side opened
    found = [(path, repo.relative(path), _read(path)) for path in rulebooks]  # every one, before any is compared
    failing = False
    for path, rel, now in found:
        then = None if commit is None else repo.blob(commit, rel)
        if then is None or then == now:
            _skipped(path, ref, turns_file, new=then is None, fmt=fmt, reports=reports)
            continue
        diff, judge = _diff(path, then, f"{ref}:{rel}", judge, turns, name, lines)
        from norma.cli._rules_diff_output import render

        for chosen, out in [(fmt, None), *reports]:
            render(chosen, diff, name, lines, limit, out)
        failing = diff.failing(fail_on) or failing
    return 1 if failing else 0


def _read(path: Path) -> bytes:
    """The rulebook file's bytes as they are now."""
    try:
        return path.read_bytes()
    except OSError as exc:
        from norma.errors import InvalidInputError

        raise InvalidInputError(f"cannot read the rulebook: {exc.strerror or exc}", source=str(path)) from None


def _turns(turns_file: str, allow_empty: bool) -> tuple[str, list[int], list[dict[str, Any]]]:
    """The turns file's name, each turn's line in it and the turns, as ``norma rules diff`` reads them (a bad record
    is an error at its line)."""
    from norma.cli._check_batch import read_turns
    from norma.cli._engine import record_line
    from norma.errors import NormaError

    records = read_turns(turns_file)
    if not records and not allow_empty:
        from norma.cli._batch_run import no_records

        raise no_records(turns_file, "turn records")
    lines: list[int] = []
    turns: list[dict[str, Any]] = []
    for record in records:
        if isinstance(record.payload, NormaError):
            raise record.payload
        lines.append(record_line(record.where))
        turns.append(record.payload)
    return ("<stdin>" if turns_file == "-" else turns_file), lines, turns


def _diff(
    path: Path, then: bytes, label: str, judge: Any, turns: list[dict[str, Any]], name: str, lines: list[int]
) -> tuple[RulebookDiff, Any]:
    """The diff of ``turns`` between the rulebook's bytes at REF (``then``, shown as ``label``: ``HEAD:rules.yaml``)
    and the file ``path``; and the judge both sides used."""
    from norma.cli._rules_diff import _placed, _progress
    from norma.errors import NormaError
    from norma.turns import diff_turns
    from norma.turns import open as open_rules

    with tempfile.TemporaryDirectory(prefix="norma-diff-") as folder:
        old_file = Path(folder) / path.name  # the same suffix: the same reader (YAML or JSON)
        old_file.write_bytes(then)
        try:
            before: Norma = open_rules(old_file, judge=judge)
        except NormaError as exc:
            if exc.source == str(old_file):
                exc.source = label
            raise
    after = open_rules(path, judge=before.judge)  # one judge: the rules both have are judged once
    try:
        with _progress() as advance:
            diff = diff_turns(before, after, turns, progress=advance)
    except NormaError as exc:
        raise _placed(exc, name, lines) from None
    return dataclasses.replace(diff, old=dataclasses.replace(diff.old, source=label)), before.judge


def _skipped(path: Path, ref: str, turns_file: str, *, new: bool, fmt: str, reports: list[tuple[str, Path]]) -> None:
    """Say that ``path`` was not compared (new since REF, or the same as there): on stderr, and as the Markdown
    output or report (JSON and JUnit are not written)."""
    from norma.cli._output import write_text

    def says(code: str) -> str:
        """The sentence, names and commands between ``code`` (backticks in Markdown)."""
        name = f"{code}{path}{code}"
        if new:
            check = f"norma check --rules {path} --batch {turns_file}"
            return (
                f"{name} is new: {code}{ref}{code} does not have it, there is nothing to compare it with "
                f"(check the turns against it with {code}{check}{code})"
            )
        return f"{name} is the same as at {code}{ref}{code}: no rule changed (nothing to compare)"

    click.echo(f"norma: {says('')}", err=True)
    markdown = f"## norma rules diff\n\n{says('`')}.\n"
    for chosen, out in [(fmt, None), *reports]:
        if chosen == "markdown":
            write_text(markdown, out, "the markdown output")
        elif chosen == "table" and out is not None:
            write_text(f"{says('')}\n", out, "the table output")


@dataclasses.dataclass(frozen=True)
class _Repo:
    """The git repository a folder is in (its top level), read with the ``git`` command."""

    top: Path

    @classmethod
    def of(cls, folder: Path) -> _Repo:
        from norma.errors import InvalidInputError

        done = _git(folder, "rev-parse", "--show-toplevel")
        if done.returncode != 0:
            raise InvalidInputError(
                f"{folder} is not in a git repository: {_said(done)}",
                source=str(folder),
                hint="run norma rules diff-git in the repository's checkout (norma rules diff compares two files)",
            )
        return cls(Path(os.fsdecode(done.stdout.strip())).resolve())

    def commit(self, ref: str) -> str | None:
        """The commit ``ref`` names; None when it is ``HEAD`` in a repository without a commit yet (every rulebook
        is new then)."""
        from norma.errors import NotFoundError

        if ref.startswith("-"):  # never read as an option of git
            raise NotFoundError(f"{ref!r} is not a git commit", location="--against", hint="give a branch, tag or SHA")
        done = _git(self.top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        if done.returncode == 0:
            return done.stdout.decode("ascii").strip()
        if ref == "HEAD" and _git(self.top, "rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
            return None
        raise NotFoundError(
            f"no commit {ref!r} in the git repository at {self.top}",
            location="--against",
            hint="fetch it first (git fetch origin REF; in GitHub Actions, actions/checkout with fetch-depth: 0)",
        )

    def relative(self, path: Path) -> str:
        """``path`` as git names it in a commit: relative to the top level, with ``/``."""
        from norma.errors import InvalidInputError

        try:
            return path.resolve().relative_to(self.top).as_posix()
        except ValueError:
            raise InvalidInputError(
                f"the rulebook is outside the git repository at {self.top}",
                source=str(path),
                hint="give a rulebook of the repository the command runs in",
            ) from None

    def blob(self, commit: str, rel: str) -> bytes | None:
        """The bytes of file ``rel`` at ``commit``; None when the commit has no such file."""
        from norma.errors import InvalidInputError

        spec = f"{commit}:{rel}"
        if _git(self.top, "cat-file", "-e", spec).returncode != 0:
            return None
        done = _git(self.top, "cat-file", "blob", spec)
        if done.returncode != 0:  # a folder of that name at the commit
            raise InvalidInputError(f"{rel} is not a file at {commit}: {_said(done)}", source=rel)
        return done.stdout


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    from norma.errors import MissingDependencyError

    try:
        return subprocess.run(
            ["git", *args], cwd=folder, capture_output=True, check=False, timeout=_GIT_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise MissingDependencyError(
            "comparing with a git commit (the git command)", install="install git (apt-get install git)"
        ) from None


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    """What git said on stderr, on one line."""
    return " ".join(done.stderr.decode("utf-8", "replace").split()) or f"git exited {done.returncode}"
