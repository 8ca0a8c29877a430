"""Headless Chromium for the playground tests (Debian's ``chromium`` + ``chromium-driver``, driven by Selenium):
start a browser, open the playground with a key, wait, read pixels of a screenshot.

The screenshot reader decodes Chromium's PNG itself (zlib + the five PNG row filters; no imaging library is a
dependency of norma) at a reduced scale, enough to tell a rendered page from a blank or broken one.
"""

from __future__ import annotations

import base64
import shutil
import struct
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "CHROMIUM",
    "CHROMEDRIVER",
    "Pixels",
    "needs_chromium",
    "open_playground",
    "playground_site",
    "screenshot",
    "start_browser",
    "wait_for",
]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

needs_chromium = pytest.mark.skipif(
    not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
    reason="needs Debian's chromium and chromium-driver (make install installs them as root)",
)


@contextmanager
def start_browser(width: int = 1400, height: int = 1000, extra_args: tuple[str, ...] = ()) -> Iterator[Any]:
    """A headless Chromium with its console log kept, closed on exit (``extra_args``: more command-line switches)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *extra_args):
        options.add_argument(argument)
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@contextmanager
def playground_site(store: Any, examples: Path, upstream: str | None = None) -> Iterator[str]:
    """The service (with the example audit documents) over ``store`` on a loopback port: its base URL.
    ``upstream``: the model's base URL for the guarded endpoint (``norma serve --upstream``)."""
    from norma.service import create_app
    from tests.service._server import serve_app
    from tests.service.conftest import make_settings

    app = create_app(make_settings(audit_docs=examples / "audit" / "docs", upstream_url=upstream), store=store)
    with serve_app(app) as url:
        yield url


def wait_for(driver: Any, condition: Callable[[Any], Any], timeout: float = 30) -> Any:
    """``condition(driver)`` once it is truthy (Selenium's wait), or TimeoutException."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def open_playground(driver: Any, url: str, key: str, tenant: str = "acme", *, fresh: bool = True) -> None:
    """Open the playground with ``key`` in the address fragment (as ``norma serve --demo`` prints it) and set the
    tenant. ``fresh``: forget this origin's stored history, key and theme first, and the console log."""
    from selenium.webdriver.common.by import By

    if fresh:
        driver.get(f"{url}/static/style.css")  # same origin, no script: clear its storage
        driver.execute_script("sessionStorage.clear(); localStorage.clear();")
    driver.get("about:blank")
    driver.get_log("browser")
    driver.get(f"{url}/#key={key}" if key else f"{url}/")
    wait_for(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    tenant_box = driver.find_element(By.ID, "tenant")
    tenant_box.clear()
    tenant_box.send_keys(tenant)


@dataclass(frozen=True)
class Pixels:
    """An RGB image: ``rows[y][3 * x : 3 * x + 3]`` is the pixel at (x, y)."""

    width: int
    height: int
    rows: list[bytes]

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        row = self.rows[y]
        return row[3 * x], row[3 * x + 1], row[3 * x + 2]

    def luminance(self, x: int, y: int) -> float:
        """Relative luminance in [0, 1] (sRGB weights, no gamma: enough to tell dark from light)."""
        r, g, b = self.pixel(x, y)
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255

    def colours(self, step: int = 8) -> dict[tuple[int, int, int], int]:
        """How many pixels fall in each colour bucket (channels divided by ``step``)."""
        counts: dict[tuple[int, int, int], int] = {}
        for y in range(self.height):
            row = self.rows[y]
            for x in range(0, 3 * self.width, 3):
                bucket = (row[x] // step, row[x + 1] // step, row[x + 2] // step)
                counts[bucket] = counts.get(bucket, 0) + 1
        return counts

    def mean_luminance(self) -> float:
        total = sum(self.luminance(x, y) for y in range(self.height) for x in range(self.width))
        return total / (self.width * self.height)


def screenshot(driver: Any, scale: float = 0.25) -> Pixels:
    """The viewport as pixels, scaled down by Chromium (DevTools ``Page.captureScreenshot`` with a clip)."""
    size = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    clip = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": scale}
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": clip})
    return decode_png(base64.b64decode(shot["data"]))


def decode_png(data: bytes) -> Pixels:
    """Decode an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes) into RGB rows."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position = 8
    idat = bytearray()
    width = height = channels = 0
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    previous = bytearray(stride)
    rows: list[bytes] = []
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(kind, line, previous, channels)
        rows.append(bytes(line) if channels == 3 else bytes(b for i, b in enumerate(line) if i % 4 != 3))
        previous = line
    return Pixels(width, height, rows)


def _unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> None:
    """Undo one PNG row filter in place (PNG spec §9: None, Sub, Up, Average, Paeth)."""
    if kind == 0:
        return
    if kind == 2:
        for i in range(len(line)):
            line[i] = (line[i] + previous[i]) & 0xFF
        return
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        up = previous[i]
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            corner = previous[i - bpp] if i >= bpp else 0
            guess = left + up - corner
            a, b, c = abs(guess - left), abs(guess - up), abs(guess - corner)
            line[i] = (line[i] + (left if a <= b and a <= c else up if b <= c else corner)) & 0xFF
        else:
            raise ValueError(f"unknown PNG filter {kind}")


def by_id(driver: Any, element_id: str) -> Any:
    """The page's element of that id."""
    return driver.find_element("id", element_id)


def table_rows(driver: Any, selector: str) -> list[list[str]]:
    """The text of each cell of the rows ``selector`` finds, read in one script call."""
    script = "return [...document.querySelectorAll(arguments[0])].map((r) => [...r.cells].map((c) => c.textContent))"
    return list(driver.execute_script(script, selector))


def set_value(driver: Any, element_id: str, text: str) -> None:
    """Set a field's (or a select's) value through the DOM, as a user's paste would leave it (send_keys would type
    '<' and newlines as keys, and fails on a field out of view)."""
    driver.execute_script("arguments[0].value = arguments[1]", by_id(driver, element_id), text)


def status_after(driver: Any, tab: str, working: str) -> str:
    """The ``tab``'s status line once its request answered: the results no longer busy, the line neither empty nor
    ``working`` (what it reads while the request runs)."""
    return str(
        wait_for(
            driver,
            lambda d: (
                "busy" not in (by_id(d, f"{tab}-out").get_attribute("class") or "").split()
                and (text := by_id(d, f"{tab}-status").get_attribute("textContent")) != working
                and text
            ),
        )
    )
