"""End to end in headless Chromium: `streamlit run app.py` as a subprocess, driven with Playwright.

The bot is scripted (a planted contradicting candidate); the detector is the embedded one when
models/detector exists, else a tiny random model with τ = 0.1 that flags every candidate (the
highlight plumbing is the same; what the embedded detector decides is tested in test_app_chat.py).
Skipped cleanly without Debian's /usr/bin/chromium (`make browser` installs it).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import build_tiny_nli_model
from embedded import DETECTOR_DIR

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHAT_INPUT = "textarea[data-testid='stChatInputTextArea']"
PLANTED = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2},
     {"text": "Max loves long walks in the park.", "score": -0.9}],
]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def streamlit_server(env: dict[str, str], timeout: float = 90.0):
    """`streamlit run app.py` on a free port; yields its URL once /_stcore/health answers."""
    port = free_port()
    log = open(env["GUARD_APP_LOG"], "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=REPO, env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **env},
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}: {Path(env['GUARD_APP_LOG']).read_text()}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("streamlit did not become healthy in time")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextmanager
def chromium():
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def send(page, text: str) -> None:
    """Type a message and press Enter, as a user would."""
    box = page.locator(CHAT_INPUT)
    box.wait_for(state="visible", timeout=60_000)
    sync_api.expect(box).to_be_enabled(timeout=120_000)
    box.fill(text)
    box.press("Enter")


def turn(page, turn_id: int):
    return page.locator(f"div.cg-turn[data-turn-id='{turn_id}']")


@pytest.fixture(scope="module")
def app_env(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("browser")
    script = folder / "script.json"
    script.write_text(json.dumps(PLANTED))
    if (DETECTOR_DIR / "config.json").exists():
        detector = "embedded"
    else:
        detector = str(build_tiny_nli_model(folder / "tiny_nli"))
        (Path(detector) / "guard_config.json").write_text(json.dumps({"threshold": 0.1}))
    return {"GUARD_APP_SCRIPT": str(script), "GUARD_APP_DETECTOR": detector, "GUARD_APP_MODE": "rerank",
            "GUARD_APP_CANDIDATES": "2", "GUARD_APP_LOG": str(folder / "streamlit.log"),
            "GUARD_CACHE_DIR": os.environ.get("GUARD_CACHE_DIR", "")}


@pytest.fixture(scope="module")
def server(app_env):
    env = {k: v for k, v in app_env.items() if v}
    with streamlit_server(env) as url:
        yield url


def test_planted_contradiction_is_highlighted_in_the_browser(server):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server)
        send(page, "Do you have pets?")
        sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
        send(page, "Tell me about your pets")
        sync_api.expect(turn(page, 3)).to_be_visible(timeout=120_000)
        # the earlier turn the candidate contradicts is highlighted, with its pair score
        mark = turn(page, 1).locator("mark.cg-evidence")
        sync_api.expect(mark).to_be_visible(timeout=30_000)
        badge = turn(page, 1).locator("span.cg-badge").first
        sync_api.expect(badge).to_contain_text("p=0.")
        sync_api.expect(badge).to_contain_text("turn 3")
        # the candidate list with its contradiction scores opens on demand
        page.get_by_text("Candidates (2) and why this reply").last.click()
        sync_api.expect(page.get_by_text("I have never had a dog.").first).to_be_visible()
        # the input is usable again after the reply
        sync_api.expect(page.locator(CHAT_INPUT)).to_be_enabled()


def test_five_sessions_keep_separate_conversations(server):
    with chromium() as browser:
        contexts = [browser.new_context() for _ in range(5)]
        pages = [ctx.new_page() for ctx in contexts]
        for page in pages:
            page.goto(server)
        for k, page in enumerate(pages):  # all five ask at once; the server answers them concurrently
            send(page, f"I am visitor number {k} <b>bold</b>")
        for k, page in enumerate(pages):
            sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
            transcript = page.locator("div.cg-turn").all_inner_texts()
            assert transcript[0] == f"I am visitor number {k} <b>bold</b>"  # escaped, shown literally
            others = [j for j in range(5) if j != k and any(f"number {j} " in t for t in transcript)]
            assert not others, f"session {k} shows messages of sessions {others}"
            assert len(transcript) == 2
        for ctx in contexts:
            ctx.close()
