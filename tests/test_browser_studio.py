"""A goading session in headless Chromium: a suggestion clicked, a turn annotated, the page reloaded
and the session still there, the export read back by `python -m guard evaluate`.

Same setup as test_browser_e2e.py (scripted bot, embedded detector when present, else a tiny
random one that flags everything, on the app server the browser modules share: conftest's app_server), the guard
in flag mode (picked in the sidebar). Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from harness.server import CHROMIUM, chromium, send, settle, turn, wait_until_idle
from studio.storage import Store

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")
REPO = Path(__file__).resolve().parent.parent

SCRIPT = {"replies": [
    [{"text": "I have a dog named Max. I live in Ohio.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2}, {"text": "Max loves long walks in the park.", "score": -0.9}],
]}


def test_goading_session_suggestion_annotation_reload_export(app_server, tmp_path):
    url, db, folder, detector = app_server.url(SCRIPT), app_server.db, tmp_path, app_server.detector
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1400})
        page.goto(url)
        page.get_by_test_id("stSidebar").get_by_text("flag", exact=True).click()
        settle(page)
        sync_api.expect(page.get_by_text(re.compile(r"· guard: flag ·"))).to_be_visible(timeout=60_000)
        send(page, "Do you have any pets?")
        sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
        sync_api.expect(page.get_by_text("Edit a suggestion, then send")).to_be_visible(timeout=120_000)
        page.wait_for_function("() => window.location.search.includes('session=')", timeout=60_000)
        session_id = parse_qs(urlparse(page.url).query)["session"][0]
        offered = Store(db).suggestions(session_id)
        assert 3 <= len(offered) <= 5
        # one click sends the suggestion
        page.get_by_role("button", name=offered[0]["text"]).click()
        sync_api.expect(turn(page, 2)).to_contain_text(offered[0]["text"], timeout=120_000)
        sync_api.expect(turn(page, 3)).to_be_visible(timeout=120_000)
        # the run that made the reply is over (the page is still drawing the chart and suggestions under it: a
        # click in the annotation box before then is lost to that run's redraw)
        wait_until_idle(page)
        # annotate the bot's answer to it
        box = page.get_by_test_id("stExpander").filter(has_text="Annotate turn 3")
        box.get_by_text("Annotate turn 3").click()
        # the "yes" must hold before Save: a click landing while the box's opening run still redraws it is lost (a
        # fresh clone's run saved the annotation as "no")
        said_yes = box.get_by_role("radio", name="yes").first
        for _ in range(3):
            box.get_by_text("yes", exact=True).first.click()
            settle(page)
            if said_yes.is_checked():
                break
        sync_api.expect(said_yes).to_be_checked()
        box.get_by_role("button", name="Save annotation").click()
        sync_api.expect(box.get_by_text("Saved as guest.")).to_be_visible(timeout=60_000)
        # a reload (or a new tab with the same URL) finds the session again
        page.reload()
        sync_api.expect(turn(page, 3)).to_be_visible(timeout=120_000)
        sync_api.expect(turn(page, 2)).to_contain_text(offered[0]["text"])
        assert f"session={session_id}" in page.url
    [annotation] = Store(db).annotations(session_id)
    assert annotation.contradiction and annotation.turn_index == 3
    out = folder / "export.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GUARD_STUDIO_DB": db}
    exported = subprocess.run([sys.executable, "-m", "studio", "export", "--db", db, "--format", "decode", "-o",
                               str(out), "--annotated-only"], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=300)
    assert exported.returncode == 0, exported.stderr
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert record["is_contradiction"] is True and record["record_id"] == f"{session_id}:3"
    evaluated = subprocess.run([sys.executable, "-m", "guard", "evaluate", "--format", "decode", str(out),
                                "--detector", detector, "--json", "-q"], cwd=REPO, env=env, capture_output=True,
                               text=True, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(evaluated.stdout)["overall"]["n"] == 1
