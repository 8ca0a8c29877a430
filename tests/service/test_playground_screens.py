"""The playground as it is drawn, in a real headless Chromium: light and dark (the system's choice and the toggle,
remembered), and screenshots of each tab after its flow that must not be blank or broken.

No reference PNG is stored: fonts and anti-aliasing differ between machines, so a pixel comparison would either
fail on another machine or be so tolerant that it proves little. Each screenshot is checked for what a broken page
loses: many colours in real proportions (not near-uniform), the theme's background, and the key elements laid out
with a size, side by side, inside the window. The checks are shown to fail on a blank page and on the page without
its stylesheet.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from norma.service import DemoTenant
from norma.store import RuleStore
from tests.service._browser import (
    Pixels,
    needs_chromium,
    open_playground,
    playground_site,
    screenshot,
    start_browser,
    wait_for,
)

pytestmark = [pytest.mark.slow, needs_chromium]

WIDTH, HEIGHT = 1280, 900


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with start_browser(WIDTH, HEIGHT) as driver:
        yield driver


@pytest.fixture(scope="module")
def site(store: RuleStore, examples: Path) -> Iterator[str]:
    with playground_site(store, examples) as url:
        yield url


@pytest.fixture
def system_theme(browser: Any) -> Iterator[Any]:
    """Set the system's colour scheme the page sees (``prefers-color-scheme``); back to none after the test."""

    def emulate(scheme: str) -> None:
        features = [{"name": "prefers-color-scheme", "value": scheme}]
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})

    yield emulate
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def _luminance(css_colour: str) -> float:
    """``rgb(r, g, b)`` / ``rgba(...)`` as a luminance in [0, 1]."""
    parts = css_colour[css_colour.index("(") + 1 : css_colour.index(")")].split(",")
    r, g, b = (float(p) for p in parts[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def _colours(driver: Any) -> tuple[float, float]:
    """The page's background and text luminance."""
    background, text = driver.execute_script(
        "const s = getComputedStyle(document.body); return [s.backgroundColor, s.color];"
    )
    return _luminance(background), _luminance(text)


def _pressed(driver: Any) -> str:
    return str(driver.execute_script("return document.querySelector('#theme [aria-pressed=true]').dataset.theme"))


def test_screenshots_are_decoded_exactly(browser: Any) -> None:
    """The test's PNG reader against colours known in advance (bands wide enough to survive the scaling)."""
    bands = [(200, 30, 60), (20, 90, 220), (250, 250, 250), (5, 5, 5), (120, 200, 40), (77, 13, 190)]
    divs = "".join(f"<div style='height:100px;background:rgb{c}'></div>" for c in bands)
    browser.get(f"data:text/html,<body style='margin:0'>{divs}</body>")
    pixels = screenshot(browser, scale=0.5)
    assert (pixels.width, pixels.height) == (WIDTH // 2, pixels.height)
    for index, colour in enumerate(bands):
        y = index * 50 + 25
        for x in (0, 7, pixels.width // 2, pixels.width - 1):
            assert pixels.pixel(x, y) == colour, (index, x)


def _assert_rendered(pixels: Pixels, theme: str) -> None:
    """Not blank, not near-uniform, and drawn in ``theme`` (light or dark)."""
    total = pixels.width * pixels.height
    colours = pixels.colours()
    main = max(colours.values()) / total
    visible = [n for n in colours.values() if n >= total * 0.001]
    assert main < 0.9, f"near-uniform: one colour covers {main:.0%} of the page"
    assert len(visible) >= 8, f"only {len(visible)} colours cover 0.1 % of the page or more"
    mean = pixels.mean_luminance()
    if theme == "dark":
        assert mean < 0.35, f"a dark page should be dark: mean luminance {mean:.2f}"
    else:
        assert mean > 0.6, f"a light page should be light: mean luminance {mean:.2f}"


def _assert_laid_out(driver: Any, tab: str, result_id: str) -> None:
    """The key elements have a size, the form and the results sit side by side, nothing overflows the window."""
    boxes = driver.execute_script(
        """
        const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
        const tab = arguments[0];
        return {
          topbar: box(document.querySelector(".topbar")),
          tabs: box(document.querySelector(".tabs")),
          form: box(document.querySelector("#tab-" + tab + " .side .form")),
          results: box(document.querySelector("#tab-" + tab + " .results")),
          result: box(document.getElementById(arguments[1])),
          scroll: [document.documentElement.scrollWidth, window.innerWidth],
        };
        """,
        tab,
        result_id,
    )
    for name in ("topbar", "tabs", "form", "results", "result"):
        assert boxes[name][2] > 100, (name, boxes[name])
        assert boxes[name][3] > 20, (name, boxes[name])
    form_right = boxes["form"][0] + boxes["form"][2]
    assert form_right <= boxes["results"][0], f"the form ({form_right}) runs into the results ({boxes['results'][0]})"
    assert boxes["form"][1] == pytest.approx(boxes["results"][1], abs=40), "form and results side by side"
    assert boxes["scroll"][0] <= boxes["scroll"][1], "the page is wider than the window"


def _run_tab(driver: Any, tab: str) -> str:
    """Run the tab's flow; the id of the element that shows its result."""
    driver.find_element("css selector", f"button[data-tab={tab}]").click()
    if tab == "match":
        driver.find_element("css selector", "#match-examples button").click()
        wait_for(driver, lambda d: "matched" in d.find_element("id", "match-status").text)
        driver.find_element("css selector", "#match-dropped summary").click()
        return "match-gate"
    if tab == "check":
        driver.find_element("id", "check-run").click()
        wait_for(driver, lambda d: d.find_element("id", "check-verdict").text == "FAIL")
        return "check-lines"
    if tab == "audit":
        driver.find_element("id", "audit-run").click()
        wait_for(driver, lambda d: d.find_element("id", "audit-verdict").text == "FAIL")
        return "audit-lines"
    driver.find_element("id", "names-generate").click()
    wait_for(driver, lambda d: d.find_element("id", "names-status").text.startswith("generated"))
    return "names-report"


def test_the_page_follows_the_system_theme(browser: Any, site: str, acme_key: str, system_theme: Any) -> None:
    system_theme("dark")
    open_playground(browser, site, acme_key)
    background, text = _colours(browser)
    assert background < 0.15
    assert text > 0.7
    assert _pressed(browser) == "auto"
    system_theme("light")  # the page follows the change (an event: wait for it)
    wait_for(browser, lambda d: _colours(d)[0] > 0.85)
    background, text = _colours(browser)
    assert background > 0.85
    assert text < 0.2


def test_the_theme_toggle_is_remembered(browser: Any, site: str, acme_key: str, system_theme: Any) -> None:
    system_theme("dark")
    open_playground(browser, site, acme_key)
    browser.find_element("css selector", "#theme [data-theme=light]").click()
    assert _colours(browser)[0] > 0.85
    assert browser.execute_script("return localStorage.getItem('norma-theme')") == "light"
    open_playground(browser, site, acme_key, fresh=False)  # a reload: still light, though the system is dark
    assert browser.execute_script("return document.documentElement.dataset.theme") == "light"
    assert _colours(browser)[0] > 0.85
    assert _pressed(browser) == "light"
    browser.find_element("css selector", "#theme [data-theme=auto]").click()
    assert browser.execute_script("return localStorage.getItem('norma-theme')") is None
    assert _colours(browser)[0] < 0.15
    system_theme("light")
    browser.find_element("css selector", "#theme [data-theme=dark]").click()
    assert _colours(browser)[0] < 0.15
    open_playground(browser, site, acme_key, fresh=False)
    assert _colours(browser)[0] < 0.15


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("tab", ["match", "check", "audit", "names"])
def test_each_tab_is_drawn(
    browser: Any, site: str, acme_key: str, demo: DemoTenant, system_theme: Any, tab: str, theme: str
) -> None:
    system_theme(theme)
    if tab == "check":  # its example turn, on the rulebook whose rules carry checks
        open_playground(browser, site, demo.key, tenant="demo")
    else:
        open_playground(browser, site, acme_key)
    _assert_rendered(screenshot(browser), theme)  # the empty state too
    result = _run_tab(browser, tab)
    browser.execute_script("window.scrollTo(0, 0)")
    _assert_rendered(screenshot(browser), theme)
    _assert_laid_out(browser, tab, result)


def test_the_checks_fail_on_a_blank_page(browser: Any) -> None:
    browser.get("about:blank")
    with pytest.raises(AssertionError, match="near-uniform"):
        _assert_rendered(screenshot(browser), "light")


def test_the_checks_fail_without_the_stylesheet(browser: Any, site: str, acme_key: str) -> None:
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/static/style.css"]})
    try:
        open_playground(browser, site, acme_key)
        result = _run_tab(browser, "match")
        with pytest.raises(AssertionError):
            _assert_laid_out(browser, "match", result)
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        browser.execute_cdp_cmd("Network.disable", {})


def test_a_narrow_window_stacks_form_results_history(browser: Any, site: str, acme_key: str) -> None:
    browser.set_window_size(600, HEIGHT)
    try:
        open_playground(browser, site, acme_key)
        _run_tab(browser, "match")
        tops = browser.execute_script(
            """
            const top = (s) => document.querySelector(s).getBoundingClientRect().top;
            return [top("#tab-match .form"), top("#tab-match .results"), top("#tab-match .history"),
                    document.documentElement.scrollWidth, window.innerWidth];
            """
        )
        form, results, history, scroll_width, inner_width = tops
        assert form < results < history
        assert scroll_width <= inner_width, "the page is wider than a narrow window"
        _assert_rendered(screenshot(browser), "light")
    finally:
        browser.set_window_size(WIDTH, HEIGHT)
