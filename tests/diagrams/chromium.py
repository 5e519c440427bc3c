"""Headless Chromium driven over the DevTools protocol, for ``tests/docs/test_site.py``, which looks at
the built documentation (the explorer and the report are driven with Playwright: ``test_playwright.py``).

The browser is Debian's ``chromium`` (installed by scripts/setup.sh), started on 127.0.0.1 with a
fresh profile directory and the flags this closed network needs; the DevTools websocket is spoken
with ``websocket-client``. ``Browser.open`` loads a page and records what a person's browser would
show: console errors, uncaught exceptions, failed loads and every network request. Always close
the browser (the fixture of test_site.py does, in a finalizer).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket

CHROMIUM = os.environ.get("KGC_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


@dataclass
class PageVisit:
    url: str
    console_errors: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    failed_loads: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return self.console_errors + self.exceptions + self.failed_loads


class Browser:
    def __init__(self, executable: str = CHROMIUM, startup_timeout: float = 60.0) -> None:
        if not Path(executable).exists():
            raise RuntimeError(f"{executable} is missing: run ./scripts/setup.sh (it installs Debian's chromium)")
        self.profile = tempfile.mkdtemp(prefix="kgc-chromium-")
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._id = 0
        self._events: list[dict[str, Any]] = []
        try:
            port = self._wait_for_port(startup_timeout)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
                targets = json.load(reply)
            page = next(t for t in targets if t.get("type") == "page")
            self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable")
            self.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
        except BaseException:
            self.close()
            raise

    def _wait_for_port(self, timeout: float) -> int:
        marker = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with code {self.process.returncode} while starting")
            if marker.exists():
                lines = marker.read_text().split()
                if lines:
                    return int(lines[0])
            time.sleep(0.05)
        raise RuntimeError(f"chromium did not open its DevTools port within {timeout:.0f} s")

    # ------------------------------------------------------------------ protocol
    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        mine = self._id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == mine:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self._events.append(message)

    def _wait_event(self, name: str, timeout: float) -> None:
        if any(e["method"] == name for e in self._events):
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = json.loads(self.ws.recv())
            if "method" in message:
                self._events.append(message)
                if message["method"] == name:
                    return
        raise RuntimeError(f"no {name} within {timeout:.0f} s")

    # ------------------------------------------------------------------ pages
    def open(self, path: Path | str, timeout: float = 60.0) -> PageVisit:
        """Load a file (or URL), wait for its load event and a moment for late errors."""
        url = Path(path).resolve().as_uri() if not str(path).startswith(("file:", "http:", "data:")) else str(path)
        self._events.clear()
        self.call("Page.navigate", url=url)
        self._wait_event("Page.loadEventFired", timeout)
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))", await_promise=True)
        visit = PageVisit(url)
        for e in self._events:
            params = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                visit.console_errors.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
            elif e["method"] == "Runtime.exceptionThrown":
                visit.exceptions.append(str(params.get("exceptionDetails", {}).get("text")))
            elif e["method"] == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                visit.console_errors.append(str(params["entry"].get("text")))
            elif e["method"] == "Network.loadingFailed":
                visit.failed_loads.append(str(params.get("errorText")))
            elif e["method"] == "Network.requestWillBeSent":
                visit.requests.append(str(params.get("request", {}).get("url")))
        return visit

    def evaluate(self, expression: str, await_promise: bool = False) -> Any:
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=await_promise)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"page script failed: {reply['exceptionDetails'].get('text')}")
        return reply.get("result", {}).get("value")

    def screenshot(self, full_page: bool = True) -> bytes:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": min(size[1], 16000), "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            with contextlib.suppress(OSError):
                ws.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)
