"""Request bodies read by one set of rules: every JSON body is parsed once, here, and refused with a 4xx problem
naming the field when the library's own readers would refuse it.

The routes' class (:class:`StrictJsonRoute`) parses a JSON body before FastAPI validates it, with the checks of
``norma._safety.load_json`` (the CLI's reader): at most 64 levels and 2,000,000 values, text that is valid Unicode
(no lone surrogate such as ``"\\ud800"``), finite numbers (no ``NaN``, ``Infinity``, ``1e999``), integers of at most
4,300 digits. A refusal is a :class:`~norma.errors.InvalidInputError` (400) or
:class:`~norma.errors.LimitExceededError` (413) whose ``location`` is the field (``body.rubric.criteria[0].weight``);
malformed JSON stays FastAPI's 422 naming the position. The value parsed here is the one the route gets.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from norma._safety import check_json_value
from norma.errors import InvalidInputError, LimitExceededError

__all__ = ["StrictJsonRequest", "StrictJsonRoute", "parse_body"]

_UNSET: Any = object()


def parse_body(body: bytes) -> Any:
    """The JSON value of a request body, checked as ``norma._safety.load_json`` checks files.

    Raises:
        json.JSONDecodeError: not JSON at all (FastAPI answers 422 naming the position).
        InvalidInputError: not UTF-8, a lone surrogate, NaN or Infinity (``location``: the field, from ``body``).
        LimitExceededError: too deep, too many values, an integer too long to read.
    """
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        raise
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"the request body is not valid UTF-8 at byte {exc.start}", location="body") from None
    except RecursionError:
        raise LimitExceededError("the request body nests too deeply to parse", location="body") from None
    except ValueError:  # an integer with more digits than Python reads (4,300 by default)
        raise LimitExceededError(
            f"a number in the request body has more than {sys.get_int_max_str_digits():,} digits", location="body"
        ) from None
    try:
        check_json_value(value)
    except InvalidInputError as exc:
        where = exc.location or ""
        exc.location = f"body{'' if not where or where.startswith('[') else '.'}{where}"
        raise
    return value


def _is_json(content_type: str | None) -> bool:
    if content_type is None:
        return True  # FastAPI reads a body without a content type as JSON
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


class StrictJsonRequest(Request):
    """A request whose JSON body is read by :func:`parse_body` (once; FastAPI's ``json()`` gets the same value)."""

    _parsed: Any = _UNSET

    async def json(self) -> Any:
        if self._parsed is _UNSET:
            self._parsed = parse_body(await self.body())
        return self._parsed


class StrictJsonRoute(APIRoute):
    """A route whose JSON body is checked by :func:`parse_body` before FastAPI validates it (a refusal is a problem
    response from the app's error handlers)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def strict(request: Request) -> Response:
            ours = StrictJsonRequest(request.scope, request.receive)
            content_type = ours.headers.get("content-type")
            if not _is_json(content_type) and await ours.body():
                kind = (content_type or "").split(";")[0].strip()
                raise InvalidInputError(
                    f"the body is not read as JSON: its Content-Type is {kind!r}",
                    location="headers.content-type",
                    hint="send the header Content-Type: application/json (curl: -H 'Content-Type: application/json')",
                )
            if _is_json(content_type) and await ours.body():
                with contextlib.suppress(json.JSONDecodeError):  # malformed: FastAPI's 422 naming the position
                    await ours.json()
            return await handler(ours)

        return strict
