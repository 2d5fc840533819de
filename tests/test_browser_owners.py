"""Sessions belong to their browser (issue 38), in headless Chromium: two browser contexts (two browsers) on one
server with no teacher password neither see nor continue each other's session by its ``?session=`` link nor find
it on the Review page, each gets its own back after a reload; then the same database served with
``GUARD_TEACHER_PASSWORD`` set: the teacher signs in on Review, sees both, exports both and opens one on the chat page.

Same setup as test_browser_studio.py (scripted bot, the embedded detector when present, a fresh SQLite database).
Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import hashlib
import json
import re
from urllib.parse import parse_qs, urlparse

import pytest

from harness.server import (
    CHROMIUM,
    chromium,
    open_expander,
    scripted_app_env,
    send,
    streamlit_server,
    submit_teacher_password,
    turn,
    wait_until_idle,
)
from studio.storage import Store

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

SCRIPT = {"replies": [[{"text": "I have a dog named Max.", "score": -0.4}],
                      [{"text": "Max loves long walks in the park.", "score": -0.5}]]}
PASSWORD = "owl-42 in the class"
VIEW = {"width": 1400, "height": 1200}


def _chat(context, url: str, message: str) -> tuple[object, str]:
    """A page of this browser context that sent ``message`` and got its reply; the page and the session id."""
    page = context.new_page()
    page.goto(url)
    send(page, message)
    sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
    page.wait_for_function("() => window.location.search.includes('session=')", timeout=60_000)
    return page, parse_qs(urlparse(page.url).query)["session"][0]


def _listed(page, url: str) -> list[str]:
    """The session ids the Review page lists to this browser (its sessions table's first column)."""
    page.goto(f"{url}/review")
    page.get_by_role("heading", name="Review goading sessions").wait_for(timeout=120_000)
    wait_until_idle(page)
    table = page.locator("table.cg-sessions")
    # the table, or the page's word that there is none: a run can end and another start (the cookie's component
    # answering) before the table is drawn
    table.or_(page.get_by_text("No sessions yet")).first.wait_for(timeout=120_000)
    wait_until_idle(page)
    if not table.count():
        return []
    return [t.strip() for t in table.locator("tbody tr td:last-child").all_inner_texts()]  # the id column


def test_two_browsers_keep_their_sessions_apart_and_the_teacher_sees_both(tmp_path):
    db = f"sqlite:///{tmp_path / 'studio.db'}"
    env = scripted_app_env(tmp_path, SCRIPT, "rerank", GUARD_STUDIO_DB=db)
    env.pop("GUARD_TEACHER_PASSWORD", None)
    with chromium() as browser:
        ann, bob = browser.new_context(viewport=VIEW), browser.new_context(viewport=VIEW)
        with streamlit_server({**env, "GUARD_TEACHER_PASSWORD": ""}, log_path=tmp_path / "students.log") as url:
            ann_page, ann_id = _chat(ann, url, "Do you have any pets?")
            bob_page, bob_id = _chat(bob, url, "Where do you live?")
            # the browser's own token is in its cookie; the database keeps only its hash, and neither is an id
            [cookie] = [c for c in ann.cookies() if c["name"] == "cg_browser"]
            assert cookie["sameSite"] == "Strict" and cookie["expires"] > 0
            assert Store(db).session_info(ann_id).owner == hashlib.sha256(cookie["value"].encode()).hexdigest()
            assert cookie["value"] not in (ann_id, bob_id)
            # Bob opens Ann's link: refused, nothing of it shown, a new chat offered
            bob_page.goto(f"{url}/?session={ann_id}")
            sync_api.expect(bob_page.get_by_text("was started in another browser")).to_be_visible(timeout=120_000)
            wait_until_idle(bob_page)
            assert "Do you have any pets?" not in bob_page.locator("[data-testid='stMainBlockContainer']").inner_text()
            assert not turn(bob_page, 0).count()
            bob_page.get_by_role("button", name="Start a new chat").click()
            sync_api.expect(bob_page.get_by_text("was started in another browser")).to_have_count(0, timeout=60_000)
            assert "session=" not in bob_page.url
            send(bob_page, "Tell me about your pets")  # neither continued: Bob's message starts a session of his own
            sync_api.expect(turn(bob_page, 1)).to_be_visible(timeout=120_000)
            bob_page.wait_for_function("() => window.location.search.includes('session=')", timeout=60_000)
            bob_second = parse_qs(urlparse(bob_page.url).query)["session"][0]
            assert bob_second not in (ann_id, bob_id) and len(Store(db).load_session(ann_id).turns) == 2
            # each finds only its own sessions on the Review page, and says the teacher view is off on this server
            assert _listed(bob_page, url) == [bob_id, bob_second]
            assert _listed(ann_page, url) == [ann_id]
            open_expander(ann_page.get_by_test_id("stSidebar"), "Teacher",
                          ann_page.get_by_text("Teacher sign-in is off on this server"), exact=True)
            # a reload of Ann's own link (the same browser, its cookie sent) gets her conversation back
            ann_page.goto(f"{url}/?session={ann_id}")
            sync_api.expect(turn(ann_page, 1)).to_contain_text("I have a dog named Max.", timeout=120_000)
            sync_api.expect(ann_page.get_by_text("was started in another browser")).to_have_count(0)
        # the same database on a server started with the teacher's password
        teacher = browser.new_context(viewport=VIEW, accept_downloads=True)
        with streamlit_server({**env, "GUARD_TEACHER_PASSWORD": PASSWORD},
                              log_path=tmp_path / "teacher.log") as url:
            page = teacher.new_page()
            # the first visitor of this server opens /review itself: Streamlit runs pages/review.py alone then, and
            # the page offers the app (tests/test_browser_server.py); its link opens Review inside the app
            page.goto(f"{url}/review")
            page.get_by_role("link", name="Open “Review sessions” in the app").click()
            page.get_by_role("heading", name="Review goading sessions").wait_for(timeout=120_000)
            assert _listed(page, url) == []
            sidebar = page.get_by_test_id("stSidebar")
            # ... with the app around it: the shared sidebar and the app's own navigation
            sync_api.expect(sidebar.get_by_text("Presentation mode")).to_be_visible()
            sync_api.expect(page.get_by_test_id("stSidebarNav").get_by_text("Review sessions")).to_be_visible()
            submit_teacher_password(sidebar, PASSWORD)
            wait_until_idle(page)
            table = page.locator("table.cg-sessions")
            rows = [t.strip() for t in table.locator("tbody tr td:last-child").all_inner_texts()]
            assert rows == [ann_id, bob_id, bob_second]
            assert PASSWORD not in page.content()
            _the_sessions_table_fits_its_box(page)
            page.get_by_text("Annotated bot replies only").click()
            sync_api.expect(page.get_by_role("button", name=re.compile(r"\(3 records\)"))).to_be_visible(
                timeout=60_000)
            wait_until_idle(page)
            with page.expect_download() as download:
                page.get_by_role("button", name=re.compile("Download for training")).click()
            records = [json.loads(line) for line in open(download.value.path()).read().splitlines()]
            assert sorted(r["record_id"] for r in records) == sorted(f"{i}:1" for i in (ann_id, bob_id, bob_second))
            # the teacher opens Ann's session on the chat page
            page.get_by_role("combobox", name=re.compile("A session to read or annotate")).click()
            page.get_by_role("option", name=re.compile(re.escape(ann_id))).click()
            opener = page.get_by_role("link", name="Open in the chat")  # its href follows the choice once rerun
            sync_api.expect(opener).to_have_attribute("href", re.compile(f"session={re.escape(ann_id)}"),
                                                      timeout=60_000)
            wait_until_idle(page)
            opener.click()
            sync_api.expect(turn(page, 0)).to_contain_text("Do you have any pets?", timeout=120_000)
            assert f"session={ann_id}" in page.url
            sync_api.expect(sidebar.get_by_text("Presentation mode")).to_be_visible()  # still inside the app


def _the_sessions_table_fits_its_box(page) -> None:
    """Issues 38 and 45: the Review page's tables stay inside the page's column; the sessions table, wider than that,
    scrolls sideways inside its box with the session and player columns kept in view, and its headers are words;
    a session is named by its first message and when it started, its id last."""
    column = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    for table in ("cg-scoreboard", "cg-players", "cg-sessions"):  # the scoreboard's headers were cut ("share flagg…")
        box = page.locator(f"div.cg-table-wrap:has(table.{table})").bounding_box()
        assert box["x"] >= column["x"] - 1 and box["x"] + box["width"] <= column["x"] + column["width"] + 1, table
    wrap = page.locator("div.cg-table-wrap:has(table.cg-sessions)")
    box = wrap.bounding_box()
    headers = page.locator("table.cg-sessions th").all_inner_texts()
    assert headers[:2] == ["session", "player"] and headers[-1] == "id" and not [h for h in headers if "_" in h], \
        headers
    first = page.locator("table.cg-sessions tbody tr:first-child td:first-child").inner_text()
    assert re.fullmatch(r"“.+” · \d\d \w{3}, \d\d:\d\d UTC", first.strip()), first
    wrap.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    page.wait_for_timeout(300)
    for k in (0, 1):  # the pinned cells stay where they were; the last column comes into view
        cell = page.locator(f"table.cg-sessions tbody tr:first-child td:nth-child({k + 1})").bounding_box()
        assert box["x"] - 1 <= cell["x"] <= box["x"] + box["width"] / 2, (k, cell, box)
    last = page.locator("table.cg-sessions thead th:last-child").bounding_box()
    assert last["x"] + last["width"] <= box["x"] + box["width"] + 1
