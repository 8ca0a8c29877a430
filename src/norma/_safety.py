"""Reading untrusted input without being hurt by it: bounded YAML/JSON, paths kept inside a base, linear regexes.

Every capability that reads user data goes through these helpers, so the guarantees of docs/security.md hold in
one place:

* :func:`load_yaml` / :func:`load_json` — ``safe_load`` only; the text size, the nesting depth and the number of
  values *after alias expansion* are bounded (a "billion laughs" document is rejected, not expanded); text that is
  not valid Unicode (a lone surrogate such as ``"\\ud800"``) is refused, and so are JSON numbers that are not
  finite (``NaN``, ``Infinity``, ``1e999``). :func:`check_json_value` applies the same checks to a value already
  parsed (the service's request bodies), naming the field at fault.
* :func:`resolve_within` — a user-given relative name resolved under a base directory; ``..``, absolute paths, NUL
  bytes and symlinks leading out are rejected.
* :func:`compile_pattern` — user-configurable regular expressions compiled with RE2 (linear time: a catastrophic
  pattern cannot stall a worker); back-references and look-arounds are refused with a clear error.

All failures are :class:`~norma.errors.InvalidInputError` (size limits: :class:`~norma.errors.LimitExceededError`).
"""

from __future__ import annotations

import errno
import ipaddress
import json
import math
import os
import socket
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import yaml

from norma.errors import ConfigError, InvalidInputError, LimitExceededError, NormaError

__all__ = [
    "DEFAULT_LIMITS",
    "bounded_lines",
    "InputLimits",
    "Pattern",
    "check_json_value",
    "check_unicode",
    "compile_pattern",
    "ensure_bindable",
    "ensure_public_host",
    "is_unicode",
    "json_lines",
    "load_json",
    "load_yaml",
    "parse_yaml_bounded",
    "resolve_within",
]


@dataclass(frozen=True)
class InputLimits:
    """Bounds on one structured document read from a user."""

    max_bytes: int = 16 * 1024 * 1024
    """Longest text accepted, in UTF-8 bytes."""
    max_depth: int = 64
    """Deepest nesting of lists / mappings."""
    max_values: int = 2_000_000
    """Most values (scalars, lists, mappings) after expanding YAML aliases."""
    max_aliases: int = 1_000
    """Most alias references (``*name``) in a YAML document."""


DEFAULT_LIMITS = InputLimits()


def _check_size(text: str | bytes, limits: InputLimits, source: str | None) -> None:
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise LimitExceededError(
            f"input is {size:,} bytes, over the limit of {limits.max_bytes:,}",
            source=source,
            hint="split it into smaller files or raise the limit",
        )


def _field_path(path: list[str | int]) -> str:
    """``rules[0].metadata.a`` for the keys and indexes of ``path``; long keys shortened, invalid text escaped."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        key = part if len(part) <= 40 else part[:37] + "..."
        key = key.encode("utf-8", "backslashreplace").decode("utf-8")
        out += f".{key}" if out else key
    return out if len(out) <= 160 else out[:157] + "..."


def is_unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode (no lone surrogate, so it can be written as UTF-8)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def json_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text as JSON Lines readers and editors count them: split at ``\\n`` only, a
    trailing ``\\r`` dropped, no empty last line for a final newline. ``str.splitlines`` would also split at U+2028,
    U+2029, U+0085 and the other characters a JSON string may hold raw, cutting a record in two."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _check_shape(value: Any, limits: InputLimits, source: str | None, *, finite: bool = False) -> None:
    """Reject documents that nest too deeply, refer to themselves, expand to too many values, or hold text that is
    not valid Unicode (and, with ``finite``, numbers that are not finite: JSON has no NaN or Infinity).

    Shared sub-objects (YAML aliases) are counted each time they appear, but measured once (memoised by identity),
    so the check costs time in the size of the text, not of the expansion. Errors name the field
    (``location``: ``rules[0].metadata.a``); the path is collected only on the way out of an error.
    """
    sizes: dict[int, int] = {}
    open_ids: set[int] = set()

    def measure(item: Any, depth: int) -> int:
        if depth > limits.max_depth:
            raise _ShapeError(
                LimitExceededError(
                    f"document nests deeper than {limits.max_depth} levels", hint="flatten the structure"
                )
            )
        if not isinstance(item, (dict, list, tuple)):
            if isinstance(item, str):
                if not is_unicode(item):
                    raise _ShapeError(
                        InvalidInputError(
                            "text is not valid Unicode (it holds a lone surrogate such as \\ud800)",
                            hint="send text as UTF-8; a \\uXXXX escape of a surrogate needs its pair",
                        )
                    )
            elif finite and isinstance(item, float) and not math.isfinite(item):
                name = _NON_FINITE.get(repr(item), repr(item))
                raise _ShapeError(
                    InvalidInputError(
                        f"not valid JSON: {name} is not a JSON number",
                        hint="numbers must be finite; a literal too large for a double, such as 1e999, reads as "
                        "Infinity",
                    )
                )
            return 1
        key = id(item)
        if key in sizes:
            return sizes[key]
        if key in open_ids:
            raise _ShapeError(InvalidInputError("document refers to itself (recursive YAML alias)"), located=False)
        open_ids.add(key)
        total = 1
        is_dict = isinstance(item, dict)
        pairs: Iterable[tuple[Any, Any]] = item.items() if isinstance(item, dict) else enumerate(item)
        for name, child in pairs:
            try:
                if is_dict:
                    total += measure(name, depth + 1)
                total += measure(child, depth + 1)
            except _ShapeError as exc:
                exc.path.append(str(name) if is_dict else name)
                raise
            if total > limits.max_values:
                raise _ShapeError(
                    LimitExceededError(
                        f"document expands to more than {limits.max_values:,} values",
                        hint="YAML aliases that multiply content are not accepted; write the values out",
                    ),
                    located=False,
                )
        open_ids.discard(key)
        sizes[key] = total
        return total

    try:
        measure(value, 1)
    except _ShapeError as exc:
        error = exc.error
        error.source = source
        if exc.located:
            error.location = _field_path(exc.path[::-1]) or None
        raise error from None


class _ShapeError(Exception):
    """Carries the error of :func:`_check_shape` out of the recursion, collecting the field path on the way."""

    def __init__(self, error: NormaError, *, located: bool = True) -> None:
        super().__init__(error.message)
        self.error = error
        self.located = located
        """Whether the error is about one place (its path is the location), not the document as a whole."""
        self.path: list[str | int] = []


def check_json_value(value: Any, *, source: str | None = None, limits: InputLimits = DEFAULT_LIMITS) -> None:
    """Refuse a parsed JSON value that :func:`load_json` would refuse: too deep, too many values, text that is not
    valid Unicode, a number that is not finite. ``location`` names the field (``criteria[0].weight``).

    Raises:
        LimitExceededError: deeper than ``limits.max_depth`` or more than ``limits.max_values`` values.
        InvalidInputError: a lone surrogate in a string or key, or NaN / Infinity.
    """
    _check_shape(value, limits, source, finite=True)


def check_unicode(value: Any, *, source: str | None = None) -> None:
    """Refuse a parsed value holding text that is not valid Unicode (a lone surrogate, from a ``"\\ud800"`` escape)
    in a string or a key, at any depth; nothing else is checked (readers with a compatibility contract, such as the
    rubric loaders, use this instead of :func:`check_json_value`). ``location`` names the field.

    Raises:
        InvalidInputError: the first such string, depth first.
    """
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if not is_unicode(item):
                raise InvalidInputError(
                    "text is not valid Unicode (it holds a lone surrogate such as \\ud800)",
                    source=source,
                    location=_field_path(list(path)) or None,
                    hint="send text as UTF-8; a \\uXXXX escape of a surrogate needs its pair",
                )
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                stack.append((child, (*path, str(key))))
                stack.append((key, (*path, str(key))))
        elif isinstance(item, list | tuple):
            stack.extend((child, (*path, index)) for index, child in reversed(list(enumerate(item))))


class _BoundedSafeLoader(yaml.SafeLoader):
    """SafeLoader that refuses too many aliases and too deep nesting while composing (before construction)."""

    limits: InputLimits = DEFAULT_LIMITS
    _aliases = 0
    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > self.limits.max_aliases:
                raise LimitExceededError(f"document uses more than {self.limits.max_aliases:,} YAML aliases")
        self._depth += 1
        try:
            if self._depth > self.limits.max_depth:
                raise LimitExceededError(f"document nests deeper than {self.limits.max_depth} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def parse_yaml_bounded(text: str | bytes, *, source: str | None = None, limits: InputLimits = DEFAULT_LIMITS) -> Any:
    """Like ``yaml.safe_load`` (and raising its ``yaml.YAMLError`` for malformed text), but bounded.

    For callers that must keep PyYAML's exception types (the rubric loaders); others use :func:`load_yaml`.

    Raises:
        LimitExceededError: the size, depth, alias or expanded-size bound was exceeded.
        yaml.YAMLError: the text is not YAML.
    """
    _check_size(text, limits, source)
    loader: _BoundedSafeLoader | None = None
    try:
        loader = _BoundedSafeLoader(text)
        loader.limits = limits
        value = loader.get_single_data()
    except LimitExceededError as exc:
        exc.source = exc.source or source
        raise
    except RecursionError:
        raise LimitExceededError("document nests too deeply to parse", source=source) from None
    except ValueError:  # an integer with more digits than Python converts (4,300 by default)
        raise _too_many_digits(source) from None
    finally:
        if loader is not None:
            loader.dispose()
    _check_shape(value, limits, source)
    return value


def _too_many_digits(source: str | None) -> LimitExceededError:
    return LimitExceededError(
        f"a number has more than {sys.get_int_max_str_digits():,} digits", source=source, hint="write it as text"
    )


def load_yaml(text: str | bytes, *, source: str | None = None, limits: InputLimits = DEFAULT_LIMITS) -> Any:
    """Parse YAML safely (no Python objects, bounded size, depth and alias expansion).

    Raises:
        LimitExceededError: a bound was exceeded.
        InvalidInputError: the text is not YAML (message carries line and column).
    """
    try:
        return parse_yaml_bounded(text, source=source, limits=limits)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context, opened = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and opened is not None:
            if mark is None or "end of stream" in problem or "<stream end>" in problem:
                # the parser read to the end for what closes an opening (a quote, a bracket): the opening is the
                # place to fix, not the end of the file
                problem, mark = f"{problem} {context} that starts here", opened
            else:
                problem = f"{problem} ({context} from {_at(opened)})"
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else _place(text, exc)
        raise InvalidInputError(f"not valid YAML: {problem}", source=source, line=line, column=column) from None


def _place(text: str | bytes, exc: yaml.YAMLError) -> tuple[int | None, int | None]:
    """1-based line and column of a character PyYAML's reader refused (a NUL, bytes that are not UTF-8), which it
    gives as an offset only (in bytes for bytes)."""
    offset = getattr(exc, "position", None)
    if not isinstance(offset, int) or not 0 <= offset <= len(text):
        return None, None
    lines = text[:offset].decode("utf-8", "replace") if isinstance(text, bytes) else text[:offset]
    return lines.count("\n") + 1, len(lines) - (lines.rfind("\n") + 1) + 1


def _at(mark: Any) -> str:
    """A PyYAML mark as ``line L, column C`` (1-based)."""
    return f"line {mark.line + 1}, column {mark.column + 1}"


def load_json(
    text: str | bytes, *, source: str | None = None, limits: InputLimits = DEFAULT_LIMITS, line: int | None = None
) -> Any:
    """Parse JSON with the same bounds as :func:`load_yaml`; NaN, Infinity and numbers too large for a double
    (``1e999``) are refused, and so is text that is not valid Unicode (:func:`check_json_value`).

    ``line``: the line of ``source`` the text is (a record of a JSON Lines file); every error then names that line
    (and a syntax error its column too).
    """
    try:
        _check_size(text, limits, source)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"not valid JSON: {exc.msg}", source=source, line=exc.lineno - 1 + (line or 1), column=exc.colno
            ) from None
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"not valid UTF-8 at byte {exc.start}", source=source) from None
        except RecursionError:
            raise LimitExceededError("document nests too deeply to parse", source=source) from None
        except ValueError:  # an integer with more digits than Python converts (4,300 by default)
            raise _too_many_digits(source) from None
        check_json_value(value, source=source, limits=limits)
    except NormaError as exc:
        if line is not None and exc.line is None:
            exc.line = line
        raise
    return value


def resolve_within(base: str | os.PathLike[str], name: str, *, what: str = "file") -> Path:
    """``base / name`` resolved, guaranteed to lie inside ``base`` (after following symlinks).

    Raises:
        InvalidInputError: ``name`` is empty, absolute, has a NUL byte or a ``..`` part, or resolves outside
            ``base`` (for instance through a symlink).
    """
    hint = f"give the {what} as a plain relative name inside {os.fspath(base)}"
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError(f"empty {what} name", hint=hint)
    if "\x00" in name:
        raise InvalidInputError(f"{what} name {name!r} contains a NUL byte", hint=hint)
    candidate = Path(name)
    if candidate.is_absolute() or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise InvalidInputError(f"{what} name {name!r} is an absolute path", hint=hint)
    if any(part == ".." for part in Path(name.replace("\\", "/")).parts):
        raise InvalidInputError(f"{what} name {name!r} points outside its directory", hint=hint)
    root = Path(base).resolve()
    resolved = (root / candidate).resolve()
    if resolved != root and not resolved.is_relative_to(root):
        raise InvalidInputError(f"{what} name {name!r} resolves outside {root} (symlink?)", hint=hint)
    return resolved


class Pattern(Protocol):
    """The subset of a compiled regular expression norma uses (``re.Pattern`` and RE2 both fit)."""

    @property
    def pattern(self) -> str: ...

    def search(self, string: str, pos: int = ..., endpos: int = ...) -> Any: ...

    def finditer(self, string: str, pos: int = ..., endpos: int = ...) -> Iterator[Any]: ...


def compile_pattern(pattern: str, *, where: str | None = None, ignore_case: bool = False) -> Pattern:
    """Compile a user-configurable regular expression with RE2 (linear time in the input).

    Raises:
        InvalidInputError: the pattern is not valid RE2 syntax (back-references and look-arounds are not).
    """
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(pattern, options)  # type: ignore[no-any-return]
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InvalidInputError(
            f"regular expression {pattern!r} is not accepted: {detail}",
            location=where,
            hint="norma runs patterns with RE2 (linear time): back-references and look-arounds are not supported",
        ) from None


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def ensure_bindable(host: str | None, port: int, *, failed: str, in_use: str) -> None:
    """A :class:`ConfigError` (``failed``: the message's start, ``in_use``: the hint when the port is taken) when
    ``host:port`` cannot be bound, before anything says a server listens there. The probe binds with
    ``SO_REUSEADDR``, as the servers do; a port taken in between still fails in the server."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"{failed} {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            hint = in_use if exc.errno == errno.EADDRINUSE else None
            raise ConfigError(f"{failed} {host}:{port}: {exc.strerror}", hint=hint) from None


def ensure_public_host(host: str, port: int | None = None) -> None:
    """Refuse a host that is, or resolves to, a private, loopback, link-local or otherwise non-public address.

    Used before fetching a user-given URL where server-side request forgery matters (on by default in the service,
    off in the library). Every address the name resolves to must be public. The check happens before the
    connection, so a DNS answer that changes in between (rebinding) is not covered; docs/security.md says so.

    Raises:
        InvalidInputError: the host is not public or cannot be resolved.
    """
    name = host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port or 443, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise InvalidInputError(f"cannot resolve host {host!r}: {exc}", hint="check the URL") from None
    for info in infos:
        address = str(info[4][0])
        if not _is_public(address):
            raise InvalidInputError(
                f"refused host {host!r}: it resolves to the non-public address {address}",
                hint="private, loopback and link-local addresses are not fetched here",
            )


def bounded_lines(
    handle: IO[bytes], *, source: str, max_bytes: int, what: str = "line", hint: str | None = None
) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) of each non-blank line of a stream of UTF-8 text, never reading
    more than ``max_bytes`` + 1 bytes of one line.

    Raises:
        LimitExceededError: a line over ``max_bytes`` (``"<what> is over the limit..."``; the lines before it have
            been yielded).
        InvalidInputError: a line that is not UTF-8.
    """
    number = 0
    while True:
        raw = handle.readline(max_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            raise LimitExceededError(
                f"{what} is over the limit of {max_bytes:,} bytes", source=source, line=number, hint=hint
            )
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"not valid UTF-8 at byte {exc.start}", source=source, line=number) from None
        if text.strip():
            yield number, text
