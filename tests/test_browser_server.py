"""What the server decides, not a page, in headless Chromium against `streamlit run app.py` (issue 45): the pages run
only inside app.py (a page's own address opened first on a fresh server offers the app instead of running alone).

Scripted bot, the embedded detector when models/detector is there (harness.server.scripted_app_env). Skipped without
Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import pytest

from harness.server import CHROMIUM, scripted_app_env, streamlit_server, wait_until_idle

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

SCRIPT = {"replies": [[{"text": "I have a dog named Max.", "score": -0.4}]]}
VIEW = {"width": 1400, "height": 1000}


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
