"""Start `streamlit run app.py` (browser tests and bench_app.py) or `python -m serve` (tests/test_serve.py and
bench_serve.py) as subprocesses on free ports.

No Streamlit import here: this drives the app from outside, like a user's browser would.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # harness/ sits at the top of the repository
#: Debian's chromium, driven by Playwright; never `playwright install`.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHAT_INPUT = "textarea[data-testid='stChatInputTextArea']"


def scripted_app_env(folder: Path, script: dict, mode: str, candidates: int = 2, **more: str) -> dict[str, str]:
    """The app's settings for a run with the scripted bot playing ``script`` (written to ``folder``) in guard
    ``mode``: the embedded detector when models/detector is there, else a tiny random one with τ = 0.1 that
    flags every candidate (the same highlights then come from the plumbing alone). Reminders start off (a script
    cannot be asked again: the guard would send its composed opening where the script's reply is what a test
    checks); ``GUARD_APP_REMIND="1"`` in ``more`` turns them on. ``more``: other variables.

    For a server of a test module's own (an empty cache, a password or default bot of its own); the browser tests
    that need none of that share one server per test process (``shared_app``)."""
    path = folder / "script.json"
    path.write_text(json.dumps(script))
    return {"GUARD_APP_SCRIPT": str(path), "GUARD_APP_DETECTOR": app_detector(folder), "GUARD_APP_MODE": mode,
            "GUARD_APP_CANDIDATES": str(candidates), "GUARD_APP_REMIND": "0", **more}


def app_detector(folder: Path) -> str:
    """The detector a test's app server judges with: "embedded" when models/detector is there, else a tiny random
    one with τ = 0.1 built in ``folder`` that flags every candidate."""
    from embedded import DETECTOR_DIR
    from harness.tiny_nli import build_flagging_detector

    if (DETECTOR_DIR / "config.json").exists():
        return "embedded"
    return str(build_flagging_detector(folder / "tiny_nli"))


#: the teacher's password of the shared test server (``shared_app``)
SHARED_TEACHER_PASSWORD = "owl-42 in the class"


@dataclass(frozen=True)
class SharedApp:
    """An app server the browser test modules of one test process share (``shared_app``; tests/conftest.py's
    ``app_server``). The scripted bot by default, re-rank, two candidates, reminders off, the detector of
    ``app_detector``, a teacher's password (``password``; students may pick the scripted and the embedded bot) and a
    studio database of its own (``db``, at ``db_path``); every browser session opened with ``url(script)`` has the
    scripted bot play ``script``, and may change anything else in the sidebar, as a user would."""

    base: str
    db: str
    db_path: Path
    scripts: Path
    detector: str
    password: str

    def url(self, script: dict | None = None, page: str = "") -> str:
        """The address of ``page`` ("" for the chat, "playground", "learn", "review"); with ``script``, a link whose
        browser session has the scripted bot play it (the app's ``?script=``, ui.chat_session.follow_script_link)."""
        address = f"{self.base}/{page}"
        return address if script is None else f"{address}?script={self.add_script(script)}"

    def add_script(self, script: dict) -> str:
        """Put ``script`` among the server's scripts (once: its name is made from its content); its name."""
        text = json.dumps(script, sort_keys=True)
        name = hashlib.sha256(text.encode()).hexdigest()[:16]
        path = self.scripts / f"{name}.json"
        if not path.exists():
            partial = path.with_suffix(f".{os.getpid()}.partial")
            partial.write_text(text)
            partial.replace(path)  # never read half-written by the server
        return name


@contextmanager
def shared_app(folder: Path, timeout: float = 120.0) -> Iterator[SharedApp]:
    """Start the app server ``SharedApp`` describes, with its files in ``folder`` (its log: streamlit.log); stop it
    afterwards. Nothing of the calling environment's app settings leaks in (an empty value is the app's default)."""
    scripts = folder / "scripts"
    scripts.mkdir()
    db_path = folder / "studio.db"
    app = SharedApp(base="", db=f"sqlite:///{db_path}", db_path=db_path, scripts=scripts,
                    detector=app_detector(folder), password=SHARED_TEACHER_PASSWORD)
    env = {"GUARD_APP_SCRIPTS": str(scripts), "GUARD_APP_SCRIPT": "", "GUARD_APP_BOT": "", "GUARD_APP_PRESET": "",
           "GUARD_APP_DETECTOR": app.detector, "GUARD_APP_MODE": "rerank", "GUARD_APP_CANDIDATES": "2",
           "GUARD_APP_REMIND": "0", "GUARD_STUDIO_DB": app.db, "GUARD_TEACHER_PASSWORD": app.password,
           # the teacher allows both bots the browser tests play (the scripted one and the embedded one)
           "GUARD_CLASS_BOTS": "scripted,embedded"}
    with streamlit_server(env, log_path=folder / "streamlit.log", timeout=timeout) as url:
        yield replace(app, base=url)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def streamlit_server(env: dict[str, str] | None = None, log_path: str | Path | None = None,
                     timeout: float = 120.0, repo: Path = REPO, started: list | None = None) -> Iterator[str]:
    """Run the app (``repo``'s: another checkout's app, for a benchmark that compares two); yield its URL once
    /_stcore/health answers; stop it afterwards. ``started`` gets the server's process (its CPU is read)."""
    port = free_port()
    log = open(log_path, "w") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(
        # harness.quick_exit: once stopped, the process ends without the interpreter's 2-3 s of clean-up of its heap
        # (another checkout's app, a benchmark's "before", may not have it: streamlit itself then)
        [sys.executable, "-m", *(("harness.quick_exit", "streamlit") if (Path(repo) / "harness" / "quick_exit.py").exists()
                                 else ("streamlit",)), "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=repo, env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})},
        stdout=log, stderr=subprocess.STDOUT,
    )
    if started is not None:
        started.append(proc)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(proc, url, time.monotonic() + timeout, str(log_path) if log_path else None,
                        health="/_stcore/health", what="streamlit")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log_path:
            log.close()


@contextmanager
def chromium():
    """A headless Debian chromium through Playwright. Its ``expect`` assertions wait up to 15 s instead of Playwright's
    5: `make test` runs two test files at once on two cores, and a redraw there can take longer than 5 s (an
    assertion that passes returns as soon as it holds, so this costs a passing test nothing)."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=15_000)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def send(page, text: str, ready_timeout_ms: int = 180_000) -> None:
    """Wait until the chat input is enabled, type ``text``, press Enter."""
    from playwright.sync_api import expect

    box = page.locator(CHAT_INPUT)
    box.wait_for(state="visible", timeout=ready_timeout_ms)
    expect(box).to_be_enabled(timeout=ready_timeout_ms)
    box.fill(text)
    box.press("Enter")


#: the sidebar's persona box, as its label names it (ui/chat_sidebar.py)
PERSONA_BOX = "What the bot says about itself (one fact a line)"


def set_persona(page, lines: str) -> None:
    """Type ``lines`` (one fact a line) into the sidebar's persona box and leave it, so the app runs with them."""
    box = page.get_by_test_id("stSidebar").get_by_role("textbox", name=PERSONA_BOX)
    box.fill(lines)
    box.press("Tab")
    settle(page)


def set_tau(page, value: float) -> None:
    """Move the sidebar's τ slider with the keyboard towards ``value`` from wherever it is, until the slider shows it
    and the server has run with it (the page's header line says the new τ: a message sent sooner could be judged and
    stored with the old one on a loaded machine).

    Each key starts a rerun, so it takes as few as it can: PageUp / PageDown move ten stops (0.10), the arrows one
    (0.01, plus the detector's calibrated τ where it lies off that grid); 0.99 to 0.05 took 46 s one arrow at a time.
    It steers by what the slider shows after each key rather than counting keys: on a loaded machine a rerun started
    by an earlier key can redraw the slider with the old value after a key was pressed (CI lost a Home that way)."""
    from playwright.sync_api import expect

    thumb = page.get_by_test_id("stSidebar").get_by_role("slider")
    wanted = f"{value:.2f}"
    header = page.get_by_text(f"τ = {value:.4f}").first
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        shown = float(thumb.get_attribute("aria-valuetext"))
        if f"{shown:.2f}" == wanted:
            if header.is_visible():
                return
            page.wait_for_timeout(250)
            continue
        thumb.focus()  # a rerun started by the last key may have redrawn the slider and taken the focus
        ten_stops = abs(value - shown) >= 0.1 - 1e-9
        thumb.press(("PageUp" if ten_stops else "ArrowRight") if shown < value else
                    ("PageDown" if ten_stops else "ArrowLeft"))
        page.wait_for_timeout(30)
    expect(thumb).to_have_attribute("aria-valuetext", wanted)
    expect(header).to_be_visible()


def wait_until_idle(page, timeout_ms: int = 120_000) -> None:
    """Wait until the app's script run is over (Streamlit marks its root ``data-test-script-state="notRunning"``).

    A click on a download button while a run is still drawing the page can lose the download: the button's file is
    registered per run, and the run that replaces it drops the one the click asked for."""
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(timeout=timeout_ms)


def settle(page, start_ms: int = 2_000, timeout_ms: int = 120_000) -> None:
    """After a click or key that starts a script run: wait for that run to start (up to ``start_ms``) and then to end.
    Used where a test read the page after a fixed pause: it goes on as soon as the run is over, and waits longer
    on a loaded machine, where the pause could end mid-run."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.locator("[data-testid='stApp'][data-test-script-state='running']").wait_for(timeout=start_ms)
    except PlaywrightTimeout:
        pass  # over before we looked, or no run was started
    wait_until_idle(page, timeout_ms)


def act_until_shown(page, act: Callable[[], None], shows, timeout_ms: int = 60_000) -> None:
    """Wait for the page's script run to end, ``act`` (a click), and again if ``shows`` (a locator) has not appeared
    after a few seconds, until it has; ``page`` is the Playwright page or a locator within it.

    A click while a script run is still drawing the page can be lost: the run's next redraw puts an expander back
    closed (CI saw "Candidates (2)" clicked and its candidate never shown), and under the full suite's load CI once
    saw a "Sign in" click of a new browser context's first visit to the in-app Review page never reach the script (the
    password still in the box, neither signed in nor "Wrong password."; the test alone passed every time, the cause was
    not found)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = getattr(page, "page", page)
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        wait_until_idle(page, timeout_ms)
        if shows.is_visible():
            return
        act()
        try:
            shows.wait_for(state="visible", timeout=5_000)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise


def open_expander(scope, label: str, shows, *, last: bool = True, exact: bool = False,
                  timeout_ms: int = 60_000) -> None:
    """Click the expander headed ``label`` (the last one on the page, or the first with ``last=False``; ``exact``:
    the heading is the whole label, "Teacher" and not "Teacher password") until ``shows`` (a locator inside it) is
    visible (``act_until_shown``: a click can be lost)."""
    heading = scope.get_by_text(label, exact=exact)
    act_until_shown(scope, (heading.last if last else heading.first).click, shows, timeout_ms)


def submit_teacher_password(sidebar, password: str, timeout_ms: int = 60_000) -> None:
    """Open the sidebar's Teacher box, type ``password`` and click "Sign in" until "Signed in as the teacher" shows
    (``act_until_shown``: a click can be lost)."""
    box = sidebar.get_by_label("Teacher password")
    open_expander(sidebar, "Teacher", box, exact=True)

    def sign_in() -> None:
        box.fill(password)
        sidebar.get_by_role("button", name="Sign in").click()

    act_until_shown(sidebar, sign_in, sidebar.get_by_text("Signed in as the teacher"), timeout_ms)


def sign_in_as_teacher(page, url: str, password: str) -> None:
    """Sign ``page`` in as the teacher on the Review page's sidebar (a server started with ``GUARD_TEACHER_PASSWORD``),
    opening Review inside the app first when the server offers it alone (a first visitor of /review)."""
    page.goto(f"{url}/review")
    opener = page.get_by_role("link", name="Open “Review sessions” in the app")
    heading = page.get_by_role("heading", name="Review goading sessions")
    opener.or_(heading).first.wait_for(timeout=120_000)
    if opener.count():
        opener.click()
    heading.wait_for(timeout=120_000)
    wait_until_idle(page)
    submit_teacher_password(page.get_by_test_id("stSidebar"), password)
    wait_until_idle(page)


def dialogue_editor(page):
    """The playground's dialogue text box (its label starts "Dialogue")."""
    import re

    return page.get_by_role("textbox", name=re.compile("^Dialogue"))


def turn(page, turn_id: int):
    """The transcript turn with this id (ui.render.turn_html marks it with data-turn-id)."""
    return page.locator(f"div.cg-turn[data-turn-id='{turn_id}']")


@contextmanager
def guard_servers(*argument_lists: list[str], env: dict[str, str] | None = None, log_dir: str | Path | None = None,
                  timeout: float = 120.0) -> Iterator[list[str]]:
    """Start one ``python -m serve`` process per argument list (each on a free port of 127.0.0.1, all at once, so
    their model loading overlaps); yield their base URLs once every ``/health`` answers; stop them afterwards."""
    procs, urls, logs = [], [], []
    try:
        for k, arguments in enumerate(argument_lists):
            port = free_port()
            log = open(Path(log_dir) / f"serve-{k}-{port}.log", "w") if log_dir else subprocess.DEVNULL
            logs.append(log)
            procs.append(start_guard_server(arguments, port, env, log))
            urls.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + timeout
        for proc, url, log in zip(procs, urls, logs):
            wait_for_health(proc, url, deadline, log.name if log_dir else None)
        yield urls
    finally:
        for proc in procs:
            stop(proc)
        for log in logs:
            if log is not subprocess.DEVNULL:
                log.close()


def start_guard_server(arguments: list[str], port: int, env: dict[str, str] | None = None,
                       log=subprocess.DEVNULL, repo: Path = REPO) -> subprocess.Popen:
    """``python -m serve`` of ``repo`` on 127.0.0.1:``port`` with ``arguments``, output to ``log`` (not waited
    for)."""
    return subprocess.Popen(
        [sys.executable, "-m", "serve", "--host", "127.0.0.1", "--port", str(port), *arguments],
        cwd=repo, env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **(env or {})},
        stdout=log, stderr=subprocess.STDOUT)


def wait_for_health(proc: subprocess.Popen, url: str, deadline: float, log_path: str | None = None,
                    health: str = "/health", what: str = "python -m serve") -> None:
    """Return once ``url + health`` answers 200; raise (with the log's tail) when the process exits or time runs
    out. ``what`` names the process in those errors."""
    while True:
        if proc.poll() is not None:
            where = Path(log_path).read_text()[-2000:] if log_path else "(no log kept)"
            raise RuntimeError(f"{what} exited with code {proc.returncode}: {where}")
        try:
            with urllib.request.urlopen(f"{url}{health}", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not answer on {url}{health} in time")
        time.sleep(0.2)


def stop(proc: subprocess.Popen) -> None:
    """Stop a server process this harness started: SIGTERM, then SIGKILL after 15 s."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)
