"""The team page in a real browser: headless Chromium from Debian, driven over WebDriver
(tests/webdriver.py), against the real `boost mcp --http` (search, filter, open a skill,
copy an install line, keyboard-only use, sign-in and sign-out, a hostile registry that
runs no script and loads nothing external, axe-core with no serious or critical
violation). Skips cleanly where Chromium cannot be installed; axe-core comes from npm
(``npm install --prefix /tmp/axe axe-core``, done here when npm is there).

With ``WEB_SCREENSHOTS=1`` it also writes docs/web-*.png (1280 and 390 px).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator, List
from urllib.parse import urlencode

import pytest

from tests.helpers import ROOT, indexed_example
from tests.test_mcp_http import TOKEN, HttpMcp
from tests.web_fixtures import hostile_home
from tests.webdriver import Browser, chromedriver

# About 20-30 s on two shared cores: slow-marked (`make check` skips them; .ci/run runs them
# after it when it can install Chromium).
pytestmark = pytest.mark.slow

AXE_DIR = Path(os.environ.get("WEB_AXE_DIR", "/tmp/axe"))
AXE = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture(scope="module")
def driver() -> Iterator[str]:
    with chromedriver() as base:
        yield base


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    s = HttpMcp(indexed_example(tmp_path_factory.mktemp("webb")))
    try:
        yield f"http://127.0.0.1:{s.port}"
    finally:
        s.stop()


@pytest.fixture()
def browser(driver: str) -> Iterator[Browser]:
    b = Browser(driver)
    try:
        yield b
    finally:
        b.quit()


def axe_source() -> str:
    if not AXE.is_file() and shutil.which("npm"):
        subprocess.run(
            ["npm", "install", "--prefix", str(AXE_DIR), "axe-core"],
            capture_output=True,
            timeout=300,
            check=False,
        )
    if not AXE.is_file():
        pytest.skip("no axe-core: npm install --prefix /tmp/axe axe-core")
    return AXE.read_text(encoding="utf-8")


def serious_violations(b: Browser, axe: str) -> List[str]:
    """axe-core's serious and critical violations on the current page (injected through
    WebDriver: the page's own CSP still holds for its own resources)."""
    b.script(axe)
    got = b.script_async(
        "var done = arguments[arguments.length - 1];"
        "axe.run(document).then(function (r) { done(r.violations.map(function (v) {"
        "  return [v.impact, v.id, v.nodes.length].join(' '); })); },"
        "  function (e) { done(['error ' + e]); });"
    )
    return [v for v in got if v.split(" ")[0] in ("serious", "critical", "error")]


def test_search_filter_open_and_copy_by_keyboard(site: str, browser: Browser) -> None:
    b = browser
    b.get(site + "/")
    b.keys("/")  # focuses the search box
    assert b.attr(b.active(), "id") == "q"
    b.keys(*"fill a pdf form")
    assert b.wait("return document.querySelectorAll('a.hit-link').length > 0")
    first = b.text(b.find_all("a.hit-link")[0])
    assert first == "example:pdf-forms"
    assert "q=fill+a+pdf+form" in b.url  # results as you type keep a bookmarkable URL
    b.keys("\ue015")  # ArrowDown: the first result
    assert b.text(b.active()) == first
    b.keys("\ue015", "\ue013")  # down, then back up
    assert b.text(b.active()) == first
    b.keys("\ue007")  # Enter opens it
    assert b.wait("return location.pathname === '/skill'")
    assert "id=example%3Apdf-forms" in b.url
    heading = b.text(b.find("h1"))
    assert heading.startswith("pdf-forms")
    # Trust findings come first, then install lines with copy buttons.
    assert b.script(
        "var t = document.getElementById('trust-h'), i = document.getElementById('install-h');"
        "return !!(t.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_FOLLOWING);"
    )
    b.cdp(
        "Browser.grantPermissions",
        {"origin": site, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]},
    )
    button = b.find_all("button.copy")[0]
    b.click(button)
    assert b.wait("return document.querySelector('.copied').textContent === 'copied'")
    copied = b.script_async(
        "var done = arguments[0]; navigator.clipboard.readText().then(done, function (e) "
        "{ done('error ' + e); });"
    )
    assert copied == "boost install example:pdf-forms --agent claude"

    # Filters, with the form alone (no script needed for a bookmark).
    b.get(site + "/?" + urlencode({"q": "react tests", "kind": "rule"}))
    kinds = b.script(
        "return Array.prototype.map.call(document.querySelectorAll('#results .kind'),"
        " function (e) { return e.textContent; });"
    )
    assert kinds and set(kinds) == {"rule"}
    assert b.script("return document.getElementById('kind').value") == "rule"
    # Changing a filter updates the results in place.
    b.script(
        "var k = document.getElementById('kind'); k.value = 'skill';"
        "k.dispatchEvent(new Event('change'));"
    )
    assert b.wait(
        "var k = document.querySelectorAll('#results .kind');"
        "return k.length > 0 && Array.prototype.every.call(k, function (e) "
        "{ return e.textContent === 'skill'; });"
    )


def test_the_pages_pass_axe(site: str, browser: Browser) -> None:
    axe = axe_source()
    for path in ("/", "/?q=pdf", "/skill?id=example:pdf-forms", "/taps"):
        browser.get(site + path)
        assert serious_violations(browser, axe) == [], path
    for width, height in ((390, 844),):
        browser.resize(width, height)
        browser.get(site + "/?q=pdf")
        assert serious_violations(browser, axe) == []


def test_a_hostile_registry_runs_nothing_and_loads_nothing(driver: str, tmp_path: Path) -> None:
    s = HttpMcp(hostile_home(tmp_path))
    b = Browser(driver)
    try:
        site = f"http://127.0.0.1:{s.port}"
        pages = ["/?q=pdf+forms", "/skill?id=evil:evil-skill", "/taps"]
        b.get(site + "/skill?id=evil:evil-skill&format=json")
        b.get(site + "/skill?id=evil:evil-skill")
        files = b.script(
            "return Array.prototype.map.call(document.querySelectorAll('section a'),"
            " function (a) { return a.getAttribute('href'); });"
        )
        assert len(files) == 3
        pages += files
        for path in pages:
            b.get(site + path)
            assert b.script("return document.readyState") == "complete"
            # Move over and click everything a person might.
            for link in b.find_all("main a, main pre, main h1"):
                b.script(
                    "arguments[0].dispatchEvent(new MouseEvent('mouseover'))",
                    {"element-6066-11e4-a52e-4f735466cecf": link},
                )
            assert b.script("return typeof window.__pwned") == "undefined", path
            loaded = b.script(
                "return performance.getEntriesByType('resource').map(function (e) "
                "{ return e.name; });"
            )
            assert all(u.startswith(site + "/") for u in loaded), loaded
            assert (
                b.script("return document.querySelectorAll('img,svg,iframe,style,object').length")
                == 0
            )
        # The search as you type with the hostile results.
        b.get(site + "/")
        box = b.find("#q")
        b.type(box, "pdf forms")
        assert b.wait("return document.querySelectorAll('a.hit-link').length > 1")
        assert b.script("return typeof window.__pwned") == "undefined"
        assert b.script("return document.querySelectorAll('#results img,#results svg').length") == 0
        for entry in b.console():
            assert "127.0.0.1:9" not in str(entry.get("message")), entry
    finally:
        b.quit()
        s.stop()


def test_sign_in_and_sign_out(driver: str, tmp_path: Path) -> None:
    s = HttpMcp(indexed_example(tmp_path), env={"BOOST_MCP_TOKEN": TOKEN})
    b = Browser(driver)
    try:
        site = f"http://127.0.0.1:{s.port}"
        b.get(site + "/?q=pdf")
        assert b.url == site + "/signin"
        axe = axe_source()
        assert serious_violations(b, axe) == []
        b.get(site + "/signin")
        b.type(b.find("#token"), "wrong-token-but-long-enough")
        b.click(b.find("main button[type=submit]"))
        assert b.wait("return document.querySelector('[role=alert]') !== null")
        b.type(b.find("#token"), TOKEN)
        b.click(b.find("main button[type=submit]"))
        assert b.wait("return location.pathname === '/' && !!document.getElementById('q')")
        assert TOKEN not in b.url and TOKEN not in b.script(
            "return document.documentElement.outerHTML"
        )
        assert b.script("return document.cookie") == ""  # HttpOnly: no script sees it
        b.get(site + "/?q=pdf")
        assert b.find_all("a.hit-link")
        b.click(b.find("form.signout button"))
        assert b.wait("return location.pathname === '/signin'")
        b.get(site + "/")
        assert b.url == site + "/signin"
    finally:
        b.quit()
        s.stop()


def test_screenshots(site: str, browser: Browser, tmp_path: Path) -> None:
    """The search and skill pages at 1280 and 390 px (into docs/ when asked)."""
    out = ROOT / "docs" if os.environ.get("WEB_SCREENSHOTS") else tmp_path
    for width, height in ((1280, 900), (390, 844)):
        browser.resize(width, height)
        for name, path in (
            ("search", "/?q=fill+in+a+pdf+form"),
            ("skill", "/skill?id=example:pdf-forms"),
        ):
            browser.get(site + path)
            png = browser.screenshot()
            assert png.startswith(b"\x89PNG")
            (out / f"web-{name}-{width}.png").write_bytes(png)
