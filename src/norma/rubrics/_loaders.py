"""Loading a flexible :class:`Rubric` from a path, text, URL, mapping or an existing rubric.

The decision order is synth-ai's ``load_rubric`` (see docs/rubrics.md): ``None`` stays ``None``; a rubric is
returned as is; a mapping is validated; anything else becomes a string, read as a file when that path exists
and taken as text otherwise. Text is parsed as YAML for ``.yaml``/``.yml`` files, as JSON when it starts with
``{``, fetched when it is an ``http(s)`` URL, else tried as JSON and then YAML.

What norma adds: files and URL bodies are capped at ``max_bytes``, URLs are fetched safely
(:mod:`norma.rubrics._fetch`), unreadable files and malformed text raise :class:`~norma.errors.RubricError`
subclasses that name the file (and are still the builtin errors the original let through).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from norma._safety import check_unicode, parse_yaml_bounded
from norma.errors import InvalidInputError, LimitExceededError, RubricError
from norma.rubrics._errors import (
    BackendJudgeFormatError,
    RubricFileError,
    RubricFileMissingError,
    RubricIsADirectoryError,
    RubricJSONError,
    RubricPermissionError,
    RubricYAMLError,
)
from norma.rubrics._fetch import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT, fetch_rubric_text
from norma.rubrics._models import Rubric

__all__ = ["RubricSource", "load_rubric", "parse_rubric_text", "read_rubric_file", "unicode_checked"]

RubricSource = str | os.PathLike[str] | Mapping[str, Any] | Rubric | None
"""What :func:`load_rubric` accepts."""

_YAML_SUFFIXES = (".yaml", ".yml")


def read_rubric_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Read a rubric file as UTF-8 text, refusing directories and files over ``max_bytes``.

    Raises:
        RubricFileError: missing (also ``FileNotFoundError``), a directory (``IsADirectoryError``), unreadable
            (``PermissionError``), too large, or not UTF-8.
    """
    where = str(path)
    file = Path(path)
    try:
        if file.is_dir():
            raise RubricIsADirectoryError("is a directory, not a rubric file", source=where, hint="name a file")
        size = file.stat().st_size
        if size > max_bytes:
            raise RubricFileError(
                f"rubric file is {size} bytes, over the limit of {max_bytes} bytes",
                source=where,
                hint="trim the rubric or split its criteria (from Python, max_bytes= raises the limit)",
            )
        raw = file.read_bytes()
    except FileNotFoundError as exc:
        raise RubricFileMissingError("no such file", source=where, hint="check the path") from exc
    except PermissionError as exc:
        raise RubricPermissionError("permission denied", source=where, hint="make the file readable") from exc
    except OSError as exc:
        if isinstance(exc, RubricFileError):
            raise
        raise RubricFileError(f"cannot read the file: {exc.strerror or exc}", source=where) from exc
    if len(raw) > max_bytes:
        raise RubricFileError(f"rubric file is over the limit of {max_bytes} bytes", source=where)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RubricFileError(
            f"not UTF-8 text (byte {exc.start})", source=where, hint="save the rubric as UTF-8"
        ) from exc


def _json(text: str, source: str | None) -> Any:
    try:
        return unicode_checked(json.loads(text), source)
    except json.JSONDecodeError as exc:
        raise RubricJSONError(exc, source=source) from exc


def unicode_checked(value: Any, source: str | None, *, line: int | None = None) -> Any:
    """``value``, unless it holds text that is not valid Unicode (a ``"\\ud800"`` escape): then a RubricError
    naming the field (and ``line``, the line of ``source`` the value was read from, if given). JSON is otherwise
    read as synth-ai reads it (``json.loads``: NaN included)."""
    try:
        check_unicode(value)
    except InvalidInputError as exc:
        raise RubricError(exc.message, source=source, location=exc.location, line=line, hint=exc.hint) from None
    return value


def _yaml(text: str, source: str | None) -> Any:
    try:
        return parse_yaml_bounded(text, source=source)
    except LimitExceededError:
        raise
    except InvalidInputError as exc:  # text that is not valid Unicode, a recursive alias
        raise RubricError(exc.message, source=source, location=exc.location, hint=exc.hint) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (None, None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RubricYAMLError(f"malformed YAML: {problem}", source=source, line=line, column=column) from exc


def _filename_hint(text: str, source: str | None) -> str | None:
    if source is None and "\n" not in text and text.lower().endswith((".json", ".yaml", ".yml")):
        return f"no file named {text!r} exists"
    if "://" in text and "\n" not in text:
        return "only http:// and https:// URLs are fetched"
    return None


def _decode(
    text: str,
    suffix: str | None,
    *,
    source: str | None,
    timeout: float,
    max_bytes: int,
    fetch: bool,
    deny_private: bool,
    mapping_only: bool,
) -> Any:
    """The value rubric text decodes to.

    YAML (a ``.yaml`` file, or the fallback for text that is not JSON) must be a mapping. JSON text may decode to
    any value unless ``mapping_only``: the original returns it and its ``Rubric.model_validate`` refuses it.
    """
    stripped = text.strip()
    if not stripped:
        raise RubricError("Rubric source is empty", source=source)
    # decisions look at the stripped text; parsing sees the whole text so error lines match the file
    if suffix in _YAML_SUFFIXES:
        data = _yaml(text, source)
        if not isinstance(data, dict):
            raise RubricError("Rubric YAML must produce a mapping", source=source, hint="write key: value pairs")
        return data
    if stripped.startswith("{"):
        return _json(text, source)
    if fetch and stripped.startswith(("http://", "https://")):
        body = fetch_rubric_text(stripped, timeout=timeout, max_bytes=max_bytes, deny_private=deny_private)
        return _decode(
            body,
            None,
            source=stripped,
            timeout=timeout,
            max_bytes=max_bytes,
            fetch=False,
            deny_private=deny_private,
            mapping_only=mapping_only,
        )
    try:
        data = unicode_checked(json.loads(text), source)
        is_json = True
    except json.JSONDecodeError:
        data = _yaml(text, source)
        is_json = False
    if not isinstance(data, dict) and (mapping_only or not is_json):
        raise RubricError("Rubric text must decode to a mapping", source=source, hint=_filename_hint(stripped, source))
    return data


def parse_rubric_text(
    text: str,
    suffix: str | None = None,
    *,
    source: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    fetch: bool = True,
    deny_private: bool = False,
) -> dict[str, Any]:
    """Parse rubric text into a mapping, the way :func:`load_rubric` reads it, refusing any other value.

    Args:
        text: the text (or an ``http(s)`` URL, fetched when ``fetch`` is true).
        suffix: the lower-cased file suffix it came from, if any (``.yaml``/``.yml`` force YAML).
        source: where the text came from, for error messages.
        timeout: seconds a URL fetch may take.
        max_bytes: largest URL body accepted.
        fetch: whether a URL is fetched (a fetched body is never fetched again).
        deny_private: refuse URLs whose host resolves to a private, loopback or link-local address.

    Raises:
        RubricError: empty text ("Rubric source is empty"), YAML that is not a mapping ("Rubric YAML must produce
            a mapping"), text that is not a mapping, JSON included ("Rubric text must decode to a mapping";
            :func:`load_rubric` instead lets pydantic's ``ValidationError`` through for JSON, as the original
            does), a failed fetch.
        RubricJSONError: malformed JSON (also ``json.JSONDecodeError``).
        RubricYAMLError: malformed YAML (also ``yaml.YAMLError``).
    """
    data: dict[str, Any] = _decode(
        text,
        suffix,
        source=source,
        timeout=timeout,
        max_bytes=max_bytes,
        fetch=fetch,
        deny_private=deny_private,
        mapping_only=True,
    )
    return data


def _existing_path(text: str) -> Path | None:
    if not text.strip():  # Path("") is the current directory; empty text is an empty rubric
        return None
    try:
        path = Path(text)
        return path if path.exists() else None
    except (OSError, ValueError):  # a name too long or with a NUL byte is text, not a path
        return None


def _is_backend_judge(data: Mapping[str, Any]) -> bool:
    return (
        "event" in data
        and "outcome" in data
        and "version" not in data
        and "goal_text" not in data
        and "criteria" not in data
    )


def load_rubric(
    source: RubricSource,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    deny_private: bool = False,
) -> Rubric | None:
    """Load a flexible rubric from a path, JSON/YAML text, an ``http(s)`` URL, a mapping or a rubric.

    Args:
        source: ``None`` (returns ``None``), a :class:`Rubric` (returned unchanged), a mapping (validated), or
            anything else, turned into a string: an existing file's path, a URL, or the rubric text itself.
        timeout: seconds a URL fetch may take (default 15).
        max_bytes: largest file or URL body accepted (default 1 MiB).
        deny_private: refuse URLs (and redirects) to private, loopback or link-local addresses (default off in
            the library; the service turns it on).

    Raises:
        RubricError: unreadable input, see :func:`parse_rubric_text` and :func:`read_rubric_file`; data in the
            backend judge format.
        pydantic.ValidationError: the data does not fit the :class:`Rubric` model, including JSON that decodes to
            something other than a mapping (``"[1, 2]"``, ``"5"``, ``"null"``, a ``.json`` file holding ``[1]``):
            "Input should be a valid dictionary or instance of Rubric", as the original raises.
    """
    return _load(source, timeout=timeout, max_bytes=max_bytes, deny_private=deny_private, mapping_only=False)


def _load(
    source: RubricSource,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    deny_private: bool = False,
    mapping_only: bool = True,
) -> Rubric | None:
    """:func:`load_rubric`; with ``mapping_only`` (for the CLI, CI helpers and checks), JSON text that decodes
    to something other than a mapping is a :class:`RubricError` like the YAML one, not a ``ValidationError``."""
    if source is None:
        return None
    if isinstance(source, Rubric):
        return source
    where: str | None = None
    if isinstance(source, Mapping):
        data: Any = source
    else:
        text = str(os.fspath(source)) if isinstance(source, os.PathLike) else str(source)
        path = _existing_path(text)
        options: dict[str, Any] = {"timeout": timeout, "max_bytes": max_bytes, "mapping_only": mapping_only}
        if path is not None:
            where = text
            raw = read_rubric_file(path, max_bytes=max_bytes)
            data = _decode(raw, path.suffix.lower(), source=where, fetch=True, deny_private=False, **options)
        else:
            data = _decode(text, None, source=None, fetch=True, deny_private=deny_private, **options)
    if isinstance(data, Mapping) and _is_backend_judge(data):
        shown = f" ({source})" if isinstance(source, str) else ""
        raise BackendJudgeFormatError(
            f"rubric is in the backend judge format: it has 'event' and 'outcome' keys{shown}",
            source=where if not isinstance(source, str) else None,
            hint="a task rubric needs 'version', 'goal_text' and 'criteria'; backend judge rubrics "
            "(named '*_backend_judge.json') are for judge functions",
        )
    return Rubric.model_validate(dict(data) if isinstance(data, Mapping) else data)
