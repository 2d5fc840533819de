"""What the server decides, not a page, in headless Chromium against `streamlit run app.py` (issue 45): the pages run
only inside app.py (a page's own address opened first on a fresh server offers the app instead of running alone);
the studio database is the one the server was started with (no page has a way to set it, nor shows its address).

Scripted bot, the embedded detector when models/detector is there (harness.server.app_detector): the first test on a
fresh server of its own, the class checks on the app server the browser modules share (conftest's app_server, which
has a teacher's password). Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import re
import time

import pytest

from harness.server import (
    CHROMIUM,
    open_expander,
    scripted_app_env,
    send,
    settle,
    streamlit_server,
    submit_teacher_password,
    turn,
    wait_until_idle,
)
from studio.storage import Store

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

SCRIPT = {"replies": [[{"text": "I have a dog named Max.", "score": -0.4}]]}
VIEW = {"width": 1400, "height": 1000}
PAGES = {"/": "Guarded chat", "/playground": "Probe playground", "/learn": "Learn: contradictions in dialogue",
         "/review": "Review goading sessions"}


def test_a_pages_own_address_opened_first_on_a_fresh_server_offers_the_app(tmp_path, browser):
    env = scripted_app_env(tmp_path, SCRIPT, "rerank", GUARD_STUDIO_DB=f"sqlite:///{tmp_path / 'studio.db'}",
                           GUARD_TEACHER_PASSWORD="pw")
    with streamlit_server(env, log_path=tmp_path / "streamlit.log") as url:
        page = browser.new_context(viewport=VIEW).new_page()
        page.goto(f"{url}/review")  # nobody has opened the app on this server yet: Streamlit runs pages/review.py alone
        link = page.get_by_role("link", name="Open “Review sessions” in the app")
        link.wait_for(timeout=120_000)
        wait_until_idle(page)
        sync_api.expect(page.get_by_text("opens inside it")).to_be_visible()
        # nothing of the page ran: no heading of its own, no teacher box, none of app.py's sidebar
        sync_api.expect(page.get_by_role("heading", name="Review goading sessions")).to_have_count(0)
        sync_api.expect(page.get_by_text("Teacher", exact=True)).to_have_count(0)
        sync_api.expect(page.get_by_text("Presentation mode")).to_have_count(0)
        assert "Traceback" not in page.content()
        # the link opens the same page inside the app: its heading, app.py's sidebar and the app's own navigation
        link.click()
        page.get_by_role("heading", name="Review goading sessions").wait_for(timeout=120_000)
        wait_until_idle(page)
        assert page.url.rstrip("/").endswith("/review") and "open=" not in page.url
        sidebar = page.get_by_test_id("stSidebar")
        sync_api.expect(sidebar.get_by_text("Presentation mode")).to_be_visible()
        sync_api.expect(page.get_by_test_id("stSidebarNav").get_by_text("Review sessions")).to_be_visible()
        # from now on the process ignores pages/ for every session: another browser's first page is in the app
        other = browser.new_context(viewport=VIEW).new_page()
        other.goto(f"{url}/learn")
        other.get_by_role("heading", name="Learn: contradictions in dialogue").wait_for(timeout=120_000)
        sync_api.expect(other.get_by_text("opens inside it")).to_have_count(0)
        sync_api.expect(other.get_by_test_id("stSidebar").get_by_text("Presentation mode")).to_be_visible()


def _open_every_expander(page) -> None:
    """Open every closed expander on the page, sidebar included (what is inside a closed one is not drawn)."""
    for _ in range(10):
        closed = page.locator("details:not([open]) > summary")
        if not closed.count():
            return
        closed.first.click()
        wait_until_idle(page)


def _labels_once_drawn(page, timeout_s: float = 60.0) -> list[str]:
    """The labels of every text box on the page (expanders opened) once its runs are over and the sidebar's detector
    control is drawn: a page's first run can end before the sidebar is (a rerun follows; a two-worker test run saw an
    empty list on "/"). A student on a class server picks the detector from a list, so a page may have no text box."""
    deadline = time.monotonic() + timeout_s
    while True:
        settle(page)
        _open_every_expander(page)
        drawn = page.locator("section[data-testid='stSidebar']").get_by_text("Contradiction detector").count()
        if drawn or time.monotonic() > deadline:
            return [label for label, _ in _inputs(page)]
        page.wait_for_timeout(250)


def _inputs(page) -> list[tuple[str, object]]:
    """Every text box a visitor can type into (the chat input aside): its label and its box."""
    boxes = []
    for kind in ("stTextInput", "stTextArea", "stNumberInput"):
        for widget in page.get_by_test_id(kind).all():
            label = widget.locator("label").first.inner_text() if widget.locator("label").count() else ""
            boxes.append((label, widget.locator("input, textarea").first))
    return boxes


@pytest.fixture(scope="module")
def class_server(app_server):
    """The class checks below run on the app server the browser modules share, which has a teacher's password and a
    database of its own (each check in browser contexts of its own, as different visitors); a fresh server is the
    first test's point, not theirs. The chat's address (SCRIPT played there), the server's, its database file and
    its teacher's password."""
    return app_server.url(SCRIPT), app_server.base, app_server.db_path, app_server.password


def _sessions_opened_by(path, message: str) -> int:
    """How many sessions in the database at ``path`` open with the user's ``message``."""
    store = Store(f"sqlite:///{path}")
    return sum(1 for info in store.list_sessions()
               if (turns := store.load_session(info.id).turns) and turns[0].turn.text == message)


def test_no_page_has_a_way_to_set_the_database_nor_shows_where_it_is(class_server, browser, tmp_path):
    chat, url, path, password = class_server
    elsewhere = tmp_path / "typed-by-a-student.db"
    page = browser.new_context(viewport=VIEW).new_page()
    page.goto(chat)
    send(page, "Do you have any pets at all?")
    sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=180_000)
    wait_until_idle(page)
    for address, heading in PAGES.items():
        page.goto(url + address)
        page.get_by_role("heading", name=heading).wait_for(timeout=120_000)
        labels = _labels_once_drawn(page)
        assert page.locator("section[data-testid='stSidebar']").get_by_text("Contradiction detector").count(), \
            address  # the sidebar is drawn (a student's detector is a list to pick from, no text box)
        assert not [label for label in labels if re.search(r"database|\burl\b|where .* saved", label, re.I)], \
            (address, labels)
        content = page.content()
        assert str(path) not in content and "sqlite:" not in content.lower(), address
        # what a student would type to point the server elsewhere, in every box of the page: nothing opens it
        for label, box in _inputs(page):
            if box.is_visible() and box.is_editable() and "number" not in (box.get_attribute("type") or ""):
                box.fill(f"sqlite:///{elsewhere}")
                box.press("Tab")
                settle(page)  # the run the change starts, over before the file could appear
    assert not elsewhere.exists()
    assert _sessions_opened_by(path, "Do you have any pets at all?") == 1  # the server's database kept the chat
    # the signed-in teacher is told the kind of database, never where it is
    teacher = browser.new_context(viewport=VIEW).new_page()
    teacher.goto(f"{url}/review")
    teacher.get_by_role("heading", name="Review goading sessions").wait_for(timeout=120_000)
    wait_until_idle(teacher)
    sync_api.expect(teacher.get_by_text("the server's SQLite database")).to_have_count(0)
    sidebar = teacher.get_by_test_id("stSidebar")
    submit_teacher_password(sidebar, password)
    sync_api.expect(teacher.get_by_text("the server's SQLite database")).to_be_visible(timeout=60_000)
    wait_until_idle(teacher)
    content = teacher.content()
    for secret in (str(path), password):
        at = content.find(secret)
        assert at < 0, (secret, content[max(0, at - 400):at + 200])


def test_a_class_on_review_names_kept_sessions_named_and_the_teacher_signs_in_after_tab(class_server, browser):
    """Issue 45: the player's name is kept per browser (a new tab has it, the session carries it), the goading
    assistant speaks a class's words, Review names sessions by their first message and time, and typing the
    teacher's password, pressing Tab, then clicking "Sign in" signs in (it said "Wrong password." 3 of 3)."""
    chat, url, _, password = class_server
    ann = browser.new_context(viewport=VIEW)
    page = ann.new_page()
    page.goto(chat)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Goading studio").click()
    name = sidebar.get_by_label("Your name (player and annotator)", exact=True).and_(sidebar.locator("input"))
    name.fill("Ann")
    name.press("Tab")
    settle(page)
    send(page, "Do you have any pets?")
    sync_api.expect(turn(page, 1)).to_contain_text("I have a dog named Max.", timeout=180_000)
    page.get_by_text("Goading assistant").wait_for(timeout=120_000)
    wait_until_idle(page)
    visible = page.locator("[data-testid='stMainBlockContainer']").inner_text()
    assert "inquiring history" not in visible and "FQness" not in visible
    # a new tab of the same browser: the name is there without typing it again
    again = ann.new_page()
    again.goto(chat)
    again_sidebar = again.get_by_test_id("stSidebar")
    again_sidebar.get_by_text("Goading studio").click()
    box = again_sidebar.get_by_label("Your name (player and annotator)", exact=True).and_(again_sidebar.locator("input"))
    sync_api.expect(box).to_have_value("Ann", timeout=60_000)
    again.goto(f"{url}/review")
    table = again.locator("table.cg-sessions")
    table.wait_for(timeout=120_000)
    wait_until_idle(again)
    cells = table.locator("tbody tr:first-child td").all_inner_texts()
    assert cells[0].startswith("“Do you have any pets?” · ") and cells[1] == "Ann", cells
    # the teacher: password typed, Tab, then a click on Sign in
    teacher = browser.new_context(viewport=VIEW).new_page()
    teacher.goto(f"{url}/review")
    teacher.get_by_role("heading", name="Review goading sessions").wait_for(timeout=120_000)
    wait_until_idle(teacher)
    box = teacher.get_by_test_id("stSidebar")
    open_expander(box, "Teacher", box.get_by_label("Teacher password"), exact=True)
    box.get_by_label("Teacher password").fill(password)
    box.get_by_label("Teacher password").press("Tab")
    box.get_by_role("button", name="Sign in").click()
    sync_api.expect(box.get_by_text("Signed in as the teacher")).to_be_visible(timeout=60_000)
    sync_api.expect(box.get_by_text("Wrong password.")).to_have_count(0)


#: addresses a visitor may type from the file names (pages/review.py): each opens that page inside the app
FILE_ADDRESSES = {"/pages/review.py": ("/review", "Review goading sessions"),
                  "/pages/learn": ("/learn", "Learn: contradictions in dialogue"),
                  "/playground.py": ("/playground", "Probe playground"),
                  "/pages/guarded_chat.py": ("", "Guarded chat")}


def test_a_page_opened_by_its_file_name_opens_that_page_in_the_app(class_server, browser):
    """Issue 54: /pages/review.py was a blank page that never finished loading (Streamlit served its index.html there,
    whose relative ./static/ scripts then resolved under /pages/ and came back as that HTML again); /review.py opened
    the chat. Each now opens its page, at the page's own address, inside the app."""
    _, url, _, _ = class_server
    for typed, (address, heading) in FILE_ADDRESSES.items():
        page = browser.new_context(viewport=VIEW).new_page()
        page.goto(url + typed)
        page.get_by_role("heading", name=heading).wait_for(timeout=60_000)
        assert page.url.rstrip("/") == url + address, (typed, page.url)
        sync_api.expect(page.get_by_test_id("stSidebar").get_by_text("Presentation mode")).to_be_visible()
        page.context.close()
