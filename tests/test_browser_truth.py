"""What the screen says is true, read in the browser (issue 54's defects 4 and 5; the others have theirs in
test_browser_screen.py and test_browser_server.py): one number per quantity on the playground, and Learn in a class's
words, each thing said once."""

from __future__ import annotations

import re

import pytest

from harness.server import CHROMIUM, open_expander, settle, wait_until_idle

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed (make browser)")

ROLE_EXAMPLE = "Role confusion: the bot takes over the user's job"


def test_the_playgrounds_role_confusion_numbers_agree(app_server, browser):
    """The right-and-wrong table said p 0.92 (the highest check's score) beside the verdict's p = 0.83 for the
    role-confusion example: every p the page draws from that one verdict is the same number."""
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(app_server.url())  # the app's own navigation first (a first visit straight to a page is offered the app)
    page.get_by_role("link", name="Probe playground").click()
    page.get_by_role("heading", name="Probe playground").wait_for(timeout=180_000)
    settle(page)
    page.get_by_role("combobox", name="Built-in example").click()
    page.get_by_role("option", name=ROLE_EXAMPLE, exact=True).click()
    settle(page)
    page.locator("button", has_text="Detect").last.click()
    verdict = page.get_by_text(re.compile(r"role confusion · p = [0-9.]+", re.IGNORECASE)).first
    verdict.wait_for(timeout=180_000)
    wait_until_idle(page)
    said = float(re.search(r"p = ([0-9.]+)", verdict.inner_text()).group(1))
    row = page.locator("tr", has_text=ROLE_EXAMPLE).first
    open_expander(page, "Right and wrong per example", row, last=False)
    cells = row.locator("td").all_inner_texts()
    numbers = [float(c) for c in cells if re.fullmatch(r"0\.\d+|1\.0+|0", c.strip())]
    assert numbers == [round(said, 2)], (cells, said)
    page.close()


def test_learn_says_each_thing_once_in_a_class_s_words(app_server, browser):
    """Learn printed the long-chat note twice, said the sheet leaves out what the chat's sheet shows, and its panels
    spoke of 'generator score', 'band' and 'flags from'; every expander opened, the page says none of it."""
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(app_server.url())
    page.get_by_role("link", name="Learn").click()
    page.get_by_role("heading", name="Learn: contradictions in dialogue").wait_for(timeout=180_000)
    wait_until_idle(page)
    for expander in page.get_by_test_id("stExpander").all():
        summary = expander.locator("summary")
        if summary.count() and expander.locator("details").get_attribute("open") is None:
            summary.click()
    wait_until_idle(page)
    text = page.get_by_test_id("stMain").inner_text()
    assert text.count("ten turns earlier") == 1, text.count("ten turns earlier")
    assert "Why the page shows different percentages as lines" in text
    assert "Hobbies, likes and opinions are not on it" not in text
    found = [w for w in ("generator score", "flags from", "band 0.", "persona line") if w in text]
    assert not found, found
    page.close()
