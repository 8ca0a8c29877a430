"""The CLI's groups: every one answers an unknown subcommand with the nearest names (:class:`SuggestingGroup`), and
:class:`LazyGroup`'s subcommands are imported only when they run (or their own help is asked for).

``norma --help``, ``norma --version`` and TAB completion of command names read a table of names and one-line
helps, so they import no capability (numpy, onnxruntime, httpx, the audit rules...): the CLI answers at once.
``tests/test_cli.py`` checks that each table entry's help is the help of the command it loads.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import click
from click.shell_completion import CompletionItem
from click.utils import make_str

__all__ = ["LazyCommand", "LazyGroup", "SuggestingGroup", "unknown_command"]


def unknown_command(name: str, known: Sequence[str], command_path: str) -> str:
    """What ``command_path NAME`` says when NAME is none of ``known``: the nearest names (by similarity, then the
    names NAME begins; at most three), else where to look."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    close += [candidate for candidate in known if candidate.startswith(name) and candidate not in close]
    close = close[:3]
    if not close:
        return f"No such command {name!r}. '{command_path} --help' lists the commands."
    names = [repr(candidate) for candidate in close]
    options = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"No such command {name!r}. Did you mean {options}?"


class SuggestingGroup(click.Group):
    """A :class:`click.Group` whose "No such command" names the nearest commands (``norma rubrics``: did you mean
    'rubric'?), lazy ones included, whatever the click version."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = make_str(args[0])
        if not ctx.resilient_parsing and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise click.UsageError(unknown_command(name, self.list_commands(ctx), ctx.command_path), ctx)
        return super().resolve_command(ctx, args)


class LazyCommand:
    """Where a subcommand lives (``"package.module:attribute"``) and the help its group lists it with."""

    def __init__(self, target: str, help: str) -> None:
        self.target = target
        self.help = help

    def load(self) -> click.Command:
        """Import the command's module and return the command."""
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class LazyGroup(SuggestingGroup):
    """A :class:`click.Group` with lazily imported subcommands besides its ordinary ones."""

    def __init__(self, *args: Any, lazy: Mapping[str, LazyCommand] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, LazyCommand] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in self.lazy:
            return found
        command = self.lazy[cmd_name].load()
        self.add_command(command, cmd_name)
        return command

    def command_help(self, name: str, limit: int) -> str:
        """The one-line help of a subcommand, without importing a lazy one."""
        if name in self.commands or name not in self.lazy:
            command = self.commands[name]
            return "" if command.hidden else command.get_short_help_str(limit)
        return click.Command(name, help=self.lazy[name].help).get_short_help_str(limit)  # click's own shortening

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        with formatter.section("Commands"):
            formatter.write_dl([(name, self.command_help(name, limit)) for name in names])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        items = [
            CompletionItem(name, help=self.command_help(name, 45))
            for name in self.list_commands(ctx)
            if name.startswith(incomplete) and not (name in self.commands and self.commands[name].hidden)
        ]
        items.extend(click.Command.shell_complete(self, ctx, incomplete))
        return items
