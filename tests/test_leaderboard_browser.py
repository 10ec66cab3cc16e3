"""The leaderboard page in a real headless Chromium: every system and risk shown,
sorting by clicking a header, no network request, and a screenshot.

Chromium is driven over the DevTools protocol through ``--remote-debugging-pipe``
(fd 3: commands in, fd 4: replies out, NUL-separated JSON), so the test needs no
Python package beyond the standard library and opens no port.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from lm_eval_memrisk.leaderboard import write_leaderboard

CHROMIUM = Path("/usr/bin/chromium")
DATA = Path(__file__).parent / "data" / "leaderboard"
EPISODES = [DATA / "episodes.jsonl"]  # the runs' dataset (make_runs.py)
SYSTEMS = {"alpha", "beta", "gamma", "delta"}
RISKS = ["R1", "R2", "R3", "R4", "R5", "R6"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
    ),
]

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1400,1000",
    "--remote-debugging-pipe",
]


class Browser:
    """Minimal DevTools-protocol client over Chromium's debugging pipe."""

    def __init__(self, user_data_dir: Path, log: Path, timeout: float = 30.0) -> None:
        # sh moves our stdin/stdout pipes to fds 3/4, where --remote-debugging-pipe expects them
        self.log = log.open("wb")
        self.proc = subprocess.Popen(
            [
                "sh",
                "-c",
                'exec "$@" 3<&0 4>&1 0</dev/null 1>&2',
                "sh",
                str(CHROMIUM),
                *FLAGS,
                f"--user-data-dir={user_data_dir}",
                "about:blank",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )
        self.timeout = timeout
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def call(self, method: str, params: dict[str, Any] | None = None, browser: bool = False) -> Any:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            msg["sessionId"] = self.session
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\0")
        self.proc.stdin.flush()
        while True:
            reply = self._read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                raise TimeoutError("no reply from Chromium over the DevTools pipe")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium exited (rc={self.proc.poll()}); see {self.log.name}")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return dict(json.loads(raw))

    def js(self, expression: str) -> Any:
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def open(self, url: str) -> None:
        page = self._page_target()
        self.session = self.call(
            "Target.attachToTarget", {"targetId": page, "flatten": True}, True
        )["sessionId"]
        self.call("Network.enable")
        self.call("Page.enable")
        self.call("Page.navigate", {"url": url})
        self._wait(lambda: self.js("document.readyState") == "complete", "page load")

    def click(self, selector: str) -> None:
        """A real mouse click (press + release) at the centre of the element."""
        rect = self.js(
            f"(function(){{var e=document.querySelector({json.dumps(selector)});e.scrollIntoView();"
            "var r=e.getBoundingClientRect();return [r.x+r.width/2,r.y+r.height/2];})()"
        )
        x, y = rect
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def screenshot(self, path: Path) -> None:
        self.js("window.scrollTo(0,0)")
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.call("Browser.close", browser=True)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def _page_target(self) -> str:
        found: list[str] = []

        def ready() -> bool:
            infos = self.call("Target.getTargets", browser=True)["targetInfos"]
            found[:] = [t["targetId"] for t in infos if t["type"] == "page"]
            return bool(found)

        self._wait(ready, "a page target")
        return found[0]

    def _wait(self, cond: Any, what: str) -> None:
        deadline = time.monotonic() + self.timeout
        while not cond():
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what}")
            time.sleep(0.05)


@pytest.fixture
def page(tmp_path: Path):
    pytest.importorskip(
        "matplotlib", reason="the page embeds figures: pip install 'lm-eval-memrisk[plots]'"
    )
    out = tmp_path / "board"
    write_leaderboard([DATA / "runs", DATA / "extra" / "delta"], out, warn=lambda _: None, episodes=EPISODES)
    browser = Browser(tmp_path / "profile", tmp_path / "chromium.log")
    try:
        browser.open((out / "leaderboard.html").as_uri())
        yield browser
    finally:
        browser.close()


ROWS = "Array.from(document.querySelectorAll('#leaderboard tbody tr')).map(r=>r.dataset.system)"
SORT = "document.querySelector('#leaderboard th[data-key=\"%s\"]').getAttribute('aria-sort')"


def test_page_shows_sorts_and_screenshots(page: Browser, tmp_path: Path) -> None:
    keys = page.js(
        "Array.from(document.querySelectorAll('#leaderboard thead th')).map(t=>t.dataset.key)"
    )
    assert [k for k in keys if k in RISKS] == RISKS
    assert set(page.js(ROWS)) == SYSTEMS and len(page.js(ROWS)) == 4
    assert page.js(ROWS) == ["alpha", "beta", "gamma", "delta"]  # rank order (gamma, delta tie: mean score)
    assert page.js("document.querySelectorAll('img[src^=\"data:image/png;base64,\"]').length") == 2

    page.click('#leaderboard th[data-key="R3"]')  # R3: alpha .75, beta .50, gamma .25, delta .25
    assert page.js(SORT % "R3") == "ascending"
    assert page.js(ROWS) == ["gamma", "delta", "beta", "alpha"]  # tie keeps rank order
    page.click('#leaderboard th[data-key="R3"]')
    assert page.js(SORT % "R3") == "descending"
    assert page.js(ROWS) == ["alpha", "beta", "gamma", "delta"]
    page.click('#leaderboard th[data-key="R6"]')  # beta and delta have no R6 run: always last
    assert page.js(ROWS) == ["gamma", "alpha", "beta", "delta"]
    page.click('#leaderboard th[data-key="System"]')
    assert page.js(ROWS) == ["alpha", "beta", "delta", "gamma"]
    page.click('#leaderboard th[data-key="R3 SA"]')  # safety-aware: delta .25 < others .75
    assert page.js(ROWS)[0] == "delta"

    requested = [
        e["params"]["request"]["url"]
        for e in page.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requested and all(u.startswith(("file:", "data:")) for u in requested), requested

    shot = tmp_path / "leaderboard.png"
    page.screenshot(shot)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    keep = os.environ.get("MEMRISK_SCREENSHOT_DIR")  # to look at it by hand
    if keep:
        shutil.copy(shot, Path(keep) / "leaderboard.png")


def test_failure_link_leads_to_the_failed_checks(page: Browser) -> None:
    page.click('#leaderboard tr[data-system="gamma"] td:last-child a')
    assert page.js("location.hash").startswith("#fail-")
    section = page.js("document.querySelector(location.hash).textContent")
    assert "gamma: 10 failed episodes" in section and "R3-hard-04" in section
    page.click(f"{page.js('location.hash')} details[id$='-R3-hard-04'] summary")
    assert "ship_order must not be called" in page.js(
        "document.querySelector(location.hash+' details[open]').textContent"
    )


def test_log_text_is_shown_not_run(page: Browser) -> None:
    """beta's R4 evidence holds <script>alert(1)</script>: shown as text, never executed."""
    text = page.js("document.body.textContent")
    assert "<script>alert(1)</script>" in text
    assert page.js("document.querySelectorAll('script').length") == 1
    assert not [e for e in page.events if e.get("method") == "Page.javascriptDialogOpening"]


def _as_agent(src: Path, dest: Path, agent: str) -> Path:
    """A copy of a run folder whose results config says a scripted memrisk agent ran it."""
    shutil.copytree(src, dest)
    for results in dest.glob("results_*.json"):
        data = json.loads(results.read_text(encoding="utf-8"))
        data["config"] = {"model": "memrisk-agent", "model_args": {"agent": agent, "model": dest.name}}
        results.write_text(json.dumps(data), encoding="utf-8")
    return dest


def test_each_group_table_sorts_on_its_own(tmp_path: Path) -> None:
    """alpha and gamma recorded as scripted agents: the reference table; beta, delta: the real one."""
    pytest.importorskip("matplotlib", reason="the page embeds figures: pip install 'lm-eval-memrisk[plots]'")
    runs = [_as_agent(DATA / "runs" / "alpha", tmp_path / "alpha", "weak:churn1:p=0.7:seed=0"),
            DATA / "runs" / "beta", _as_agent(DATA / "runs" / "gamma", tmp_path / "gamma", "stale"),
            DATA / "extra" / "delta"]
    write_leaderboard(runs, tmp_path / "board", warn=lambda _: None, episodes=EPISODES)
    browser = Browser(tmp_path / "profile", tmp_path / "chromium.log")
    real = "Array.from(document.querySelectorAll('#leaderboard tbody tr')).map(r=>r.dataset.system)"
    ref = real.replace("#leaderboard ", "#leaderboard-reference ")
    try:
        browser.open((tmp_path / "board" / "leaderboard.html").as_uri())
        assert (browser.js(real), browser.js(ref)) == (["beta", "delta"], ["alpha", "gamma"])
        assert browser.js("document.querySelector('#leaderboard').compareDocumentPosition("
                          "document.querySelector('#leaderboard-reference'))") == 4  # real table first
        browser.click('#leaderboard-reference th[data-key="R3"]')  # R3: alpha .75, gamma .25
        assert (browser.js(real), browser.js(ref)) == (["beta", "delta"], ["gamma", "alpha"])
        assert browser.js(SORT % "R3") == "none"  # the real table was not touched
        browser.js("location.hash='#sort=R3:asc'")  # beta .50, delta .25: both tables sort
        browser._wait(lambda: browser.js(real) == ["delta", "beta"], "the hash sort")
        assert browser.js(ref) == ["gamma", "alpha"]
    finally:
        browser.close()
