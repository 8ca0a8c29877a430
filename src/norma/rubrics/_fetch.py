"""Safe loading of a rubric from an ``http(s)`` URL.

Compared with a bare ``GET``: only ``http`` and ``https`` are fetched, redirects are followed by hand (at most
:data:`DEFAULT_MAX_REDIRECTS`, and never to another scheme such as ``file:`` or ``ftp:``), the body is capped at
``max_bytes`` (checked against ``Content-Length`` and while streaming) and the whole exchange must finish within
``timeout`` seconds. Every failure is a :class:`~norma.errors.RubricError` naming the URL.
"""

from __future__ import annotations

import time

import httpx

from norma._safety import ensure_public_host
from norma.errors import InvalidInputError, RubricError

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_MAX_REDIRECTS", "DEFAULT_TIMEOUT", "fetch_rubric_text"]

DEFAULT_TIMEOUT = 15.0
"""Seconds a rubric fetch may take in total (the synth-ai loader's timeout)."""

DEFAULT_MAX_BYTES = 1024 * 1024
"""Largest rubric accepted from a URL or a file: 1 MiB (real rubrics are a few KiB)."""

DEFAULT_MAX_REDIRECTS = 5
"""Redirects followed before giving up."""

_SCHEMES = ("http", "https")
_REDIRECTS = (301, 302, 303, 307, 308)
_ACCEPT = "application/json, application/yaml, text/yaml, text/plain;q=0.9, */*;q=0.5"


def _too_large(url: str, size: int | str, max_bytes: int) -> RubricError:
    return RubricError(
        f"response body is {size} bytes, over the limit of {max_bytes} bytes",
        source=url,
        hint="trim the rubric or split its criteria (from Python, max_bytes= raises the limit)",
    )


def _read_body(response: httpx.Response, *, url: str, max_bytes: int, deadline: float, timeout: float) -> str:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(url, int(declared), max_bytes)
    body = bytearray()
    for chunk in response.iter_bytes():
        body.extend(chunk)
        if len(body) > max_bytes:
            raise _too_large(url, f"more than {max_bytes}", max_bytes)
        if time.monotonic() > deadline:
            raise RubricError(f"timed out after {timeout:g} s while reading the response", source=url)
    return bytes(body).decode(response.charset_encoding or "utf-8", errors="replace")


def _check_host(current: httpx.URL, url: str) -> None:
    try:
        ensure_public_host(current.host, current.port)
    except InvalidInputError as exc:
        raise RubricError(exc.message, source=url, hint=exc.hint) from None


def fetch_rubric_text(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    deny_private: bool = False,
) -> str:
    """Fetch the text of a rubric from ``url`` (``http`` or ``https`` only), safely.

    Args:
        url: the address; anything but ``http://`` or ``https://`` is refused.
        timeout: seconds for the whole fetch (connect, redirects and body).
        max_bytes: largest body accepted.
        max_redirects: redirects followed before giving up.
        deny_private: refuse hosts (first or after a redirect) that resolve to private, loopback or link-local
            addresses; the service turns this on, the library leaves it off.

    Raises:
        RubricError: a refused scheme or redirect, an HTTP error status, a timeout, a body over ``max_bytes``,
            too many redirects, or a network failure; the message names the URL.
    """
    current = httpx.URL(url)
    if current.scheme not in _SCHEMES:
        raise RubricError(
            f"unsupported URL scheme {current.scheme!r}", source=url, hint="only http and https are loaded"
        )
    deadline = time.monotonic() + timeout
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False) as client:
            for _ in range(max_redirects + 1):
                if deny_private:  # first: a refused host is refused however slow the machine was to get here
                    _check_host(current, url)
                if time.monotonic() > deadline:
                    raise httpx.TimeoutException("deadline passed between redirects")
                with client.stream("GET", current, headers={"Accept": _ACCEPT}) as response:
                    if response.status_code in _REDIRECTS:
                        location = response.headers.get("location")
                        if not location:
                            raise RubricError(f"HTTP {response.status_code} redirect without a Location", source=url)
                        target = current.join(location)
                        if target.scheme not in _SCHEMES:
                            raise RubricError(
                                f"refused redirect to {location!r}: only http and https redirects are followed",
                                source=url,
                            )
                        current = target
                        continue
                    if not response.is_success:
                        raise RubricError(
                            f"HTTP {response.status_code} {response.reason_phrase} from {current}",
                            source=url,
                            hint="check the URL; the server did not return a rubric",
                        )
                    return _read_body(response, url=url, max_bytes=max_bytes, deadline=deadline, timeout=timeout)
    except httpx.TimeoutException as exc:
        raise RubricError(f"timed out after {timeout:g} s fetching {current}", source=url) from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise RubricError(f"could not fetch {current}: {exc}", source=url) from exc
    raise RubricError(f"more than {max_redirects} redirects", source=url, hint="point at the rubric's final address")
