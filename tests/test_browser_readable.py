"""Issue 19 items 3 and 4 in headless Chromium at 1400 px: suggestion buttons read as the text they send, the
candidates table keeps every column whole with the candidate wrapped, the heatmap heads every column, and
presentation mode enlarges the tables.

Scripted bot, embedded detector when present (else a tiny random one that flags everything), a fresh studio
database. Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import pytest

from harness.server import CHROMIUM, scripted_app_env, send, streamlit_server, turn

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed (make browser)")
sync_api = pytest.importorskip("playwright.sync_api")

LONG = ("I have never had a dog, and honestly I have always been more of a cat person who enjoys quiet evenings "
        "at home with a good book and a cup of tea.")
SCRIPT = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": LONG, "score": -0.2}, {"text": "Max loves long walks in the park.", "score": -0.9}],
]}
TYPED = "I love **cats** and _dogs_ [really](x)."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser_readable")
    env = scripted_app_env(folder, SCRIPT, "rerank", GUARD_STUDIO_DB=f"sqlite:///{folder / 'studio.db'}",
                           GUARD_APP_PRESET="greedy")
    with streamlit_server(env, log_path=folder / "streamlit.log") as url:
        yield url


def test_suggestion_buttons_show_and_send_the_text_as_typed(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(server)
    send(page, TYPED)
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    said = f"What I'm saying is, {TYPED}"
    button = page.get_by_role("button", name=said, exact=True)  # not "... I love cats and dogs really."
    sync_api.expect(button).to_be_visible(timeout=120_000)
    assert button.locator("strong, em, a").count() == 0  # no Markdown rendered inside the label
    button.click()
    sync_api.expect(turn(page, 2)).to_contain_text(said, timeout=180_000)
    page.close()


def _columns_whole(page, table) -> list[str]:
    """Header cells of ``table`` cut by its box, and text cells whose text runs past their own box."""
    return table.evaluate("""t => {
        const box = t.closest('.cg-table-wrap').getBoundingClientRect(), out = [];
        for (const th of t.querySelectorAll('th')) {
            const b = th.getBoundingClientRect();
            if (b.right > box.right + 1 || b.width < 20 || th.scrollWidth > th.clientWidth + 1) out.push(th.textContent);
        }
        for (const td of t.querySelectorAll('td')) {
            if (td.scrollWidth > td.clientWidth + 1) out.push(td.textContent.slice(0, 40));
        }
        return out;
    }""")


def test_candidates_table_keeps_every_column_and_presentation_enlarges_it(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(server)
    send(page, "Do you have pets?")
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    send(page, "Tell me about your pets")
    sync_api.expect(turn(page, 3)).to_be_visible(timeout=180_000)
    page.get_by_text("Candidates (2) and why this reply").last.click()
    table = page.locator("table.cg-candidates").last
    sync_api.expect(table).to_be_visible(timeout=30_000)
    headers = table.locator("th").all_inner_texts()
    assert [h.replace("\n", " ") for h in headers] == ["#", "sent", "candidate", "why", "generator score",
                                                        "contradiction score", "category"]
    assert not _columns_whole(page, table)
    candidate = table.locator("tbody tr td:nth-child(3)").first
    assert LONG in candidate.inner_text().replace("\n", " ")  # whole, wrapped over lines
    assert candidate.evaluate("e => e.getBoundingClientRect().height") > 40
    scores = table.locator("tbody tr td:nth-child(6)").all_inner_texts()
    assert all(s.strip() and float(s) >= 0 for s in scores), scores  # the contradiction scores are shown
    normal = float(table.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    page.get_by_text("Presentation mode").click()
    page.wait_for_function("parseFloat(getComputedStyle(document.documentElement).fontSize) > 20", timeout=30_000)
    page.wait_for_timeout(1500)
    table = page.locator("table.cg-candidates").last
    if not table.is_visible():
        page.get_by_text("Candidates (2) and why this reply").last.click()
    sync_api.expect(table).to_be_visible(timeout=30_000)
    large = float(table.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    assert large >= 1.5 * normal and large >= 20, (normal, large)
    assert not _columns_whole(page, table)
    page.close()


def test_every_heatmap_column_has_a_heading_with_the_full_text_on_hover(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(server)  # the app's own navigation first (a first visit straight to /playground is Streamlit's legacy page)
    page.get_by_role("link", name="Probe playground").click()
    page.get_by_text("Built-in example").wait_for(timeout=180_000)
    page.get_by_role("combobox", name="Built-in example").click()
    page.get_by_role("option", name="A fact from the start of a long chat").click()
    page.wait_for_timeout(2000)
    page.locator("button", has_text="Detect").last.click()
    page.get_by_text("Pair scores: judged sentences").wait_for(timeout=180_000)
    chart = page.locator(".vega-embed").last
    chart.locator("g.mark-rect path").first.wait_for(timeout=60_000)
    columns = chart.evaluate("""e => new Set(Array.from(e.querySelectorAll('g.mark-rect path'))
        .filter(p => !p.closest('.role-legend')).map(p => Math.round(p.getBoundingClientRect().left))).size""")
    headings = chart.evaluate("""e => { const svg = e.querySelector('svg').getBoundingClientRect();
        return Array.from(e.querySelectorAll('g.mark-text text'))
          .filter(t => /^(turn|persona)/.test(t.textContent.trim()))
          .map(t => { const b = t.getBoundingClientRect();
                      return [t.textContent, b.left >= svg.left - 1 && b.right <= svg.right + 1 && b.top >= svg.top - 1]; }); }""")
    assert columns >= 4 and len(headings) == columns, (columns, headings)  # every column headed, none dropped
    assert all(inside for _, inside in headings), headings
    first = chart.locator("g.mark-text text").filter(has_text="turn 1").first
    first.hover()
    tooltip = page.locator("#vg-tooltip-element")
    sync_api.expect(tooltip).to_be_visible(timeout=10_000)
    assert "earlier utterance" in tooltip.inner_text() and "turn 1:" in tooltip.inner_text()
    page.close()
