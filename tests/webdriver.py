"""A small W3C WebDriver client over stdlib `urllib`, for headless Chromium and its
chromedriver (Debian's ``chromium`` and ``chromium-driver``). No selenium: the runtime
stays stdlib-only and so does this test helper.

`browser()` finds chromedriver (installing the Debian packages when it runs as root and
they are missing) or skips the test cleanly.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Optional

import pytest

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C element key


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_driver() -> Optional[str]:
    """chromedriver's path, installing Debian's packages when root and missing."""
    found = shutil.which("chromedriver")
    if found or os.environ.get("WEB_NO_BROWSER_INSTALL"):
        return found
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"],
            capture_output=True,
            timeout=600,
            check=False,
        )
    return shutil.which("chromedriver")


class Browser:
    """One WebDriver session of headless Chromium."""

    def __init__(self, base: str, width: int = 1280, height: int = 900) -> None:
        self.base = base
        body = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "args": [
                            "--headless=new",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-dev-shm-usage",
                            f"--window-size={width},{height}",
                            "--hide-scrollbars",
                            "--force-device-scale-factor=1",
                        ]
                    },
                    "goog:loggingPrefs": {"browser": "ALL"},
                }
            }
        }
        self.session = self._call("POST", "/session", body)["sessionId"]

    def _call(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return json.loads(resp.read())["value"]
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"WebDriver {method} {path}: {exc.read()[:500]!r}") from None

    def _s(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def get(self, url: str) -> None:
        self._s("POST", "/url", {"url": url})

    @property
    def url(self) -> str:
        return str(self._s("GET", "/url"))

    def script(self, code: str, *args: Any) -> Any:
        return self._s("POST", "/execute/sync", {"script": code, "args": list(args)})

    def script_async(self, code: str, *args: Any) -> Any:
        return self._s("POST", "/execute/async", {"script": code, "args": list(args)})

    def find(self, css: str) -> str:
        return str(self._s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT])

    def find_all(self, css: str) -> List[str]:
        found = self._s("POST", "/elements", {"using": "css selector", "value": css})
        return [str(e[ELEMENT]) for e in found]

    def click(self, element: str) -> None:
        self._s("POST", f"/element/{element}/click")

    def text(self, element: str) -> str:
        return str(self._s("GET", f"/element/{element}/text"))

    def type(self, element: str, text: str) -> None:
        self._s("POST", f"/element/{element}/value", {"text": text})

    def keys(self, *keys: str) -> None:
        """Key presses sent to whatever has focus (W3C actions)."""
        actions = []
        for k in keys:
            actions += [{"type": "keyDown", "value": k}, {"type": "keyUp", "value": k}]
        self._s("POST", "/actions", {"actions": [{"type": "key", "id": "kb", "actions": actions}]})

    def active(self) -> str:
        return str(self._s("GET", "/element/active")[ELEMENT])

    def attr(self, element: str, name: str) -> Optional[str]:
        got = self._s("GET", f"/element/{element}/attribute/{name}")
        return None if got is None else str(got)

    def screenshot(self) -> bytes:
        import base64

        return base64.b64decode(self._s("GET", "/screenshot"))

    def resize(self, width: int, height: int) -> None:
        self._s("POST", "/window/rect", {"width": width, "height": height})

    def cdp(self, cmd: str, params: Dict[str, Any]) -> Any:
        return self._s("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params})

    def console(self) -> List[Dict[str, Any]]:
        return list(self._s("POST", "/se/log", {"type": "browser"}) or [])

    def wait(self, code: str, timeout: float = 10.0) -> Any:
        """Poll the script ``code`` (returning a value) until it is truthy."""
        end = time.monotonic() + timeout
        while True:
            got = self.script(code)
            if got or time.monotonic() > end:
                return got
            time.sleep(0.05)

    def quit(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self._s("DELETE", "")


@contextlib.contextmanager
def chromedriver() -> Iterator[str]:
    """A running chromedriver's base URL, or skip."""
    path = find_driver()
    if path is None:
        pytest.skip("no chromedriver: apt-get install chromium chromium-driver")
    port = _free_port()
    proc = subprocess.Popen(
        [path, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                with urllib.request.urlopen(base + "/status", timeout=2) as r:
                    if json.loads(r.read())["value"].get("ready"):
                        break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.skip("chromedriver did not start")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)
