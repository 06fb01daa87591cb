"""Headless Chromium for the dashboard tests: a page that waits on conditions
read from the dashboard's read-only state, saves screenshots under artifacts/,
and collects the browser console."""

import os
import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
WAIT = 20


def chromium():
    """A headless Chromium driven by Debian's chromedriver."""
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM_BIN", shutil.which("chromium") or "/usr/bin/chromium")
    # Frames and timers at full rate whatever Chromium thinks of the window (a headless window it
    # takes for hidden or occluded gets no animation frames: the dashboard would never draw).
    # WebGL (MapLibre GL JS) without a GPU: ANGLE on SwiftShader, the CPU renderer Chromium ships.
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--window-size=1600,1000", "--no-first-run", "--disable-extensions",
                "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows",
                "--disable-renderer-backgrounding"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("CHROMEDRIVER_BIN", shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


class Page:
    def __init__(self, driver, name):
        self.driver = driver
        self.name = name
        self.console = []

    def open(self, url):
        self.driver.get(url)

    def state(self):
        return self.driver.execute_script("return window.meridianDashboard ? window.meridianDashboard.state : null")

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, predicate, what, timeout=WAIT):
        """Waits until predicate(state) is truthy; returns the state that satisfied it."""
        seen = {}

        def check(_):
            s = self.state()
            seen["last"] = s
            if s is None:
                return None
            try:
                return s if predicate(s) else None
            except (KeyError, IndexError, TypeError):
                return None  # a state the page has not filled in yet: not there yet, not a failure

        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(check)
        except Exception as e:
            self.screenshot(f"failed-{what.replace(' ', '-')}")
            raise AssertionError(f"dashboard never showed {what}; last state: {seen.get('last')}; "
                                 f"page: {self.diagnosis()}") from e

    def wait_js(self, script, what, timeout=WAIT):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: d.execute_script(script))
        except Exception as e:
            self.screenshot(f"failed-{what.replace(' ', '-')}")
            raise AssertionError(f"dashboard never showed {what}") from e

    def diagnosis(self):
        """What the page says of itself when a wait fails: visibility, focus, and whether an
        animation frame and a timer still come (a page that gets no frames never draws)."""
        try:
            return {"page": self.driver.execute_async_script("""
                const done = arguments[arguments.length - 1];
                const result = { visibility: document.visibilityState, focused: document.hasFocus(),
                                 ready: document.readyState, url: location.href, frame: false, timer: false };
                const map = document.getElementById("map");
                if (map) { const r = map.getBoundingClientRect(); result.mapRect = [r.width, r.height]; }
                result.status = document.getElementById("status")?.textContent ?? null;
                result.sheets = [...document.styleSheets].map((sheet) => {
                  try { return `${sheet.href}: ${sheet.cssRules.length} rules`; } catch (e) { return `${sheet.href}: ${e}`; } });
                result.resources = performance.getEntriesByType("resource").map((e) =>
                  `${e.name.replace(location.origin, "")} ${e.responseStatus ?? "?"} ${Math.round(e.duration)} ms`);
                requestAnimationFrame(() => { result.frame = true; });
                setTimeout(() => { result.timer = true; }, 0);
                setTimeout(() => done(result), 1000);"""), "console": self.read_console()[-20:]}
        except Exception as e:  # the diagnosis must never hide the failure it explains
            return f"unavailable: {e}"

    def screenshot(self, step):
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{self.name}-{step}.png"
        self.driver.save_screenshot(str(path))
        return path

    def read_console(self):
        self.console.extend(self.driver.get_log("browser"))
        return self.console

    def console_errors(self, allowed=()):
        return [e for e in self.read_console()
                if e["level"] in ("SEVERE", "ERROR") and not any(a in e["message"] for a in allowed)]
