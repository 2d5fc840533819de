"""Issue 19 items 3 and 4 in headless Chromium at 1400 px: suggestion buttons read as the text they send, the
candidates table keeps every column whole with the candidate wrapped, the heatmap heads every column, and
presentation mode enlarges the tables; in presentation mode with the sidebar open (issue 24) the Learn page's tables
keep their score columns inside their boxes, and the charts' text is at least 16 px with no heading over another.

Scripted bot, embedded detector when present (else a tiny random one that flags everything), on the app server the
browser modules share (conftest's app_server). Skipped without Debian's /usr/bin/chromium.
"""

from __future__ import annotations

import re

import pytest

from harness.server import (
    CHAT_INPUT,
    CHROMIUM,
    dialogue_editor,
    open_expander,
    send,
    settle,
    turn,
    wait_until_idle,
)
from ui.styles import PRESENTATION_FONT_PX

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
def server(app_server):
    """The chat on the shared app server (conftest's app_server), SCRIPT played in re-rank mode."""
    return app_server.url(SCRIPT)


def _greedy(page) -> None:
    """Pick the greedy preset in the sidebar: LONG is 32 words, the default preset's whole limit; greedy's 48
    leave it whole with room, as the candidates table must show it."""
    page.locator(CHAT_INPUT).wait_for(timeout=180_000)
    presets = page.get_by_test_id("stSidebar").get_by_role("combobox", name="How the bot picks its words")
    presets.click()
    page.get_by_role("option", name="greedy", exact=True).click()
    sync_api.expect(presets).to_have_value("greedy")
    settle(page)  # the rerun the choice starts


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
    _greedy(page)
    send(page, "Do you have pets?")
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    send(page, "Tell me about your pets")
    sync_api.expect(turn(page, 3)).to_be_visible(timeout=180_000)
    table = page.locator("table.cg-candidates").last
    open_expander(page, "Candidates (2) and why this reply", table)
    headers = table.locator("th").all_inner_texts()
    assert [h.replace("\n", " ") for h in headers] == ["#", "sent", "reply", "why", "bot's own score",
                                                        "contradiction score", "its line", "kind",
                                                        "clashes with the fact sheet"]  # a candidate has one here
    assert not _columns_whole(page, table)
    candidate = table.locator("tbody tr td:nth-child(3)").first
    assert LONG in candidate.inner_text().replace("\n", " ")  # whole, wrapped over lines
    assert candidate.evaluate("e => e.getBoundingClientRect().height") > 40
    scores = table.locator("tbody tr td:nth-child(6)").all_inner_texts()
    assert all(s.strip() and float(s) >= 0 for s in scores), scores  # the contradiction scores are shown
    normal = float(table.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    page.get_by_text("Presentation mode").click()
    page.wait_for_function("parseFloat(getComputedStyle(document.documentElement).fontSize) > 20", timeout=30_000)
    wait_until_idle(page)
    table = page.locator("table.cg-candidates").last
    open_expander(page, "Candidates (2) and why this reply", table)
    large = float(table.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    assert large >= 1.5 * normal and large >= 20, (normal, large)
    assert not _columns_whole(page, table)
    page.close()


def _detect_long_history_example(page) -> None:
    """From any page: open the playground, judge its long-history example, wait for the pair-score heatmap."""
    page.get_by_role("link", name="Probe playground").click()
    page.get_by_text("Built-in example").wait_for(timeout=180_000)
    page.get_by_role("combobox", name="Built-in example").click()
    page.get_by_role("option", name="A fact from the start of a long chat").click()
    # Detect clicked before the example's rerun has filled the editor judges the previous example (CI: one column)
    sync_api.expect(dialogue_editor(page)).to_have_value(re.compile("librarian in a small town"), timeout=60_000)
    wait_until_idle(page)  # the run that filled the editor has started: let it end
    page.locator("button", has_text="Detect").last.click()
    page.get_by_text("Pair scores: judged sentences").first.wait_for(timeout=180_000)


def test_every_heatmap_column_has_a_heading_with_the_full_text_on_hover(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1400})
    page.goto(server)  # the app's own navigation first (a first visit straight to /playground is Streamlit's legacy page)
    _detect_long_history_example(page)
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


#: every text of the page's Vega charts: its chart (the n-th .vega-embed), role, text and computed font size
CHART_TEXTS = """() => Array.from(document.querySelectorAll('.vega-embed')).flatMap((chart, n) =>
    Array.from(chart.querySelectorAll('svg text')).filter(t => t.textContent.trim()).map(t => ({
        chart: n, role: (t.closest('g[class]') || t).getAttribute('class'), text: t.textContent.slice(0, 30),
        px: parseFloat(getComputedStyle(t).fontSize)})))"""
#: the heatmap's column headings that cover one another
OVERLAPPING_HEADINGS = """e => { const hs = Array.from(e.querySelectorAll('g.mark-text text'))
    .filter(t => /^(turn|persona)/.test(t.textContent.trim())).map(t => [t.textContent, t.getBoundingClientRect()]);
  const out = [];
  for (let i = 0; i < hs.length; i++) for (let j = i + 1; j < hs.length; j++) {
    const [x, a] = hs[i], [y, b] = hs[j];
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1) out.push([x, y]);
  }
  return out; }"""


def _presentation_with_the_sidebar_open(page) -> None:
    """Presentation mode on (it collapses the sidebar), then the sidebar opened again with its arrow."""
    page.get_by_text("Presentation mode").click()
    page.wait_for_function(f"parseFloat(getComputedStyle(document.documentElement).fontSize) === {PRESENTATION_FONT_PX}",
                           timeout=30_000)
    page.get_by_role("button", name="Expand sidebar").click()
    sync_api.expect(page.locator("[data-testid='stSidebar']")).to_have_attribute("data-collapsed", "false",
                                                                                 timeout=30_000)
    page.wait_for_timeout(1000)


def _small_chart_texts(page, chart: int | None = None) -> list[dict]:
    texts = [t for t in page.evaluate(CHART_TEXTS) if chart is None or t["chart"] == chart]
    assert texts, "no chart text found"
    return [t for t in texts if t["px"] < 16]


def test_learn_tables_fit_with_the_sidebar_open_in_presentation_mode(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server)
    page.locator(CHAT_INPUT).wait_for(timeout=180_000)  # the app's first run is over: its navigation is there
    _presentation_with_the_sidebar_open(page)
    page.get_by_role("link", name="Learn").click()
    page.get_by_text("Why checking one turn at a time works better").wait_for(timeout=180_000)
    page.get_by_text("Right and wrong, example by example").click()
    tables = page.locator("table.cg-table")
    sync_api.expect(tables.first).to_be_visible(timeout=60_000)
    page.wait_for_timeout(1000)
    shown = [tables.nth(k) for k in range(tables.count()) if tables.nth(k).is_visible()]  # not those in other tabs
    widths = sorted(t.evaluate("e => e.closest('.cg-table-wrap').clientWidth") for t in shown)
    assert len(shown) >= 3 and widths[0] < 450, widths  # the right/wrong table and the narrow columns of sections 3-4
    assert page.locator("[data-testid='stSidebar']").evaluate("e => e.getBoundingClientRect().width") > 200
    cut = [cell for table in shown for cell in _columns_whole(page, table)]
    assert not cut, cut
    overflowing = [t.evaluate("e => [e.closest('.cg-table-wrap').clientWidth, e.closest('.cg-table-wrap').scrollWidth]")
                   for t in shown]
    assert all(scroll <= width + 1 for width, scroll in overflowing), overflowing  # no scroll bar: the scores in view
    assert sum(t.locator("th[data-column='clash']").count() for t in shown) >= 2
    page.close()


def test_chart_text_is_at_least_16_px_in_presentation_mode(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server)
    send(page, "Do you have pets?")
    sync_api.expect(turn(page, 1)).to_be_visible(timeout=180_000)
    page.locator(".vega-embed svg text").first.wait_for(timeout=60_000)
    assert _small_chart_texts(page), "the normal chart's text is small: the test would not see a change"
    _presentation_with_the_sidebar_open(page)
    page.wait_for_function("() => Array.from(document.querySelectorAll('.vega-embed svg text'))"
                           ".some(t => parseFloat(getComputedStyle(t).fontSize) >= 16)", timeout=30_000)
    small = _small_chart_texts(page)
    assert not small, small
    roles = {t["role"].split()[-1] for t in page.evaluate(CHART_TEXTS)}
    assert {"role-axis-label", "role-axis-title", "role-legend-label"} <= roles  # the axes' and legend's text too

    _detect_long_history_example(page)
    chart = page.locator(".vega-embed").last
    chart.locator("g.mark-rect path").first.wait_for(timeout=60_000)
    page.wait_for_timeout(1000)
    small = _small_chart_texts(page)
    assert not small, small
    assert not chart.evaluate(OVERLAPPING_HEADINGS)  # the larger headings break into shorter lines instead
    page.close()
