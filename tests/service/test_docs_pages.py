"""The API documentation pages work offline (issue 23, item 9): ``/docs`` (Swagger UI) and ``/redoc`` load every
script, style sheet and icon from the server itself, and render the API in a headless Chromium that can reach no
other host."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from norma.service import create_app
from norma.store import RuleStore
from tests.service._browser import needs_chromium, start_browser
from tests.service._server import serve_app
from tests.service.conftest import make_settings

_REFERENCE = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']""")


@pytest.fixture(scope="module")
def site(store: RuleStore) -> Iterator[str]:
    with serve_app(create_app(make_settings(), store=store)) as url:
        yield url


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_page_loads_everything_from_the_server(site: str, page: str) -> None:
    with httpx.Client(base_url=site, timeout=30) as http:
        html = http.get(page)
        assert html.status_code == 200
        assert "http://" not in html.text
        assert "https://" not in html.text
        assert "script-src 'self';" in html.headers["content-security-policy"]
        assert "<script>" not in html.text  # no inline code: the CSP allows this server's scripts only
        references = _REFERENCE.findall(html.text)
        assert any(r.endswith(".js") for r in references), references
        for reference in references:
            assert reference.startswith("/"), f"{page} loads {reference} from elsewhere"
            asset = http.get(reference)
            assert asset.status_code == 200, reference
            assert len(asset.content) > 100, reference
        if page == "/docs":
            start = http.get("/docs/start.js").text
            assert "validatorUrl: null" in start  # Swagger UI's default asks validator.swagger.io
            assert '"/openapi.json"' in start


def test_the_assets_are_cacheable_and_the_openapi_schema_is_local(site: str) -> None:
    with httpx.Client(base_url=site, timeout=30) as http:
        script = http.get("/docs/assets/swagger-ui-bundle.js")
        assert script.headers["content-type"].startswith("text/javascript")
        assert "no-store" not in script.headers.get("cache-control", "")
        assert http.get("/docs/assets/redoc.standalone.js").status_code == 200
        assert http.get("/docs/assets/../../openapi.json").status_code in (200, 404)  # never a file outside
        assert http.get("/openapi.json").json()["info"]["title"] == "norma"


@pytest.fixture(scope="module")
def offline_browser() -> Iterator[Any]:
    # no host but the loopback one resolves: the pages must render offline
    with start_browser(extra_args=("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",)) as driver:
        yield driver


def _rendered(driver: Any, css: str, text: str, timeout: float = 30) -> bool:
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def found(d: Any) -> bool:
        return any(text in element.text for element in d.find_elements(By.CSS_SELECTOR, css))

    try:
        WebDriverWait(driver, timeout).until(found)
    except TimeoutException:
        return False
    return True


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize(("page", "css"), [("/docs", ".swagger-ui .info .title"), ("/redoc", "h1")])
def test_the_page_renders_the_api_without_network(offline_browser: Any, site: str, page: str, css: str) -> None:
    offline_browser.get("about:blank")
    offline_browser.get_log("browser")
    offline_browser.get(f"{site}{page}")
    assert _rendered(offline_browser, css, "norma"), f"{page} stayed blank offline"
    loaded = offline_browser.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })"
    )
    assert loaded, "the page loaded nothing"
    log = offline_browser.get_log("browser")
    elsewhere = [name for name in loaded if not name.startswith(site)]
    # ReDoc asks for its logo from its CDN: the page's CSP refuses it (the image hides itself); nothing else leaves
    assert elsewhere in ([], ["https://cdn.redoc.ly/redoc/logo-mini.svg"]), elsewhere
    if elsewhere:
        assert any("logo-mini.svg" in e["message"] and "Content Security Policy" in e["message"] for e in log), log
    if page == "/docs":
        assert _rendered(offline_browser, ".opblock-summary-path", "/v1/tenants/{tenant}/match", timeout=10)
    else:
        assert _rendered(offline_browser, "h2", "The tenant's rules that apply to a message", timeout=10)
    problems = [
        entry["message"]
        for entry in log + offline_browser.get_log("browser")
        if entry["level"] == "SEVERE" and "logo-mini.svg" not in entry["message"]
    ]
    assert not problems, problems
