"""Screenshots of every page for the docs, taken in headless Debian chromium against `streamlit run app.py`.

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.screenshots            # writes docs/screenshot-*.png
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.screenshots --only chat --out /tmp/shots

The chat is a planted demo (the scripted bot) judged by the real detector in re-rank mode: the third
bot turn's best candidates contradict turn 1, the guard sends the consistent one, and the candidate
panel shows what it caught (the README's screenshot). The playground judges its first example (DECODE's
stay-at-home mom: a heatmap of several columns),
the Learn page is shown as it opens, the Review page lists the session just played as its browser sees it (sessions
belong to their browser), the chat and the playground once more in presentation mode (another browser), and the
Review page again as the teacher sees it, signed in on a server started with a teacher password: both sessions, and the
chat page of a new browser that picked the embedded bot and left the persona box empty: the persona the bot then plays
is shown (issue 53; the teacher allows the embedded bot beside the scripted one), and the embedded bot goaded once with
its candidate panel open, showing what it was reminded of before it wrote (issue 52). Each PNG is 1400 px wide (a
classroom laptop), as tall
as the page's content, and reduced to a 256-colour palette to stay small. The sessions go to a
throw-away studio database, not the user's.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from harness.server import (
    CHROMIUM,
    PERSONA_BOX,
    chromium,
    open_expander,
    send,
    set_persona,
    settle,
    sign_in_as_teacher,
    streamlit_server,
    turn,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"
WIDTH = 1400
BOTTOM_ROOM = 8  # px under the tallest scrolling element (Streamlit scrolls inside the page)
#: The scripted bot's turns: its third reply has two candidates that contradict turn 1 (planted).
DEMO_SCRIPT = {"replies": [
    [{"text": "Yes! I have a dog named Max. He is a golden retriever.", "score": -0.6}],
    [{"text": "I usually take Max hiking in the hills.", "score": -0.7}],
    [{"text": "I have never had a dog. Maybe one day.", "score": -0.3},
     {"text": "I am allergic to dogs, so I have no pets.", "score": -0.5},
     {"text": "I already have Max, and one dog is plenty for me!", "score": -0.8}],
]}
DEMO_MESSAGES = ["Hi! Do you have any pets?", "What do you do on weekends?", "Would you like to get a pet someday?"]
PAGES = ("chat", "playground", "learn", "review", "presentation", "presentation-playground", "review-teacher",
         "persona", "memory", "sheet", "sheet-written")
#: the screenshot server's teacher password (a throw-away server and database)
TEACHER_PASSWORD = "screenshots"


def save(page, path: Path, min_height: int = 0) -> None:
    """Fit the viewport to the page's content (Streamlit scrolls inside the page, so a full-page
    screenshot would show only the viewport), screenshot it, write a palette PNG. ``min_height``: a shot whose sidebar
    matters and is longer than the page, taken that tall and kept whole (collapsing the main column's blank rows would
    cut the sidebar)."""
    from PIL import Image

    page.wait_for_timeout(1500)  # charts and highlights settle
    content = page.evaluate("Math.max(...Array.from(document.querySelectorAll("
                            "'[data-testid=stMain], [data-testid=stAppScrollToBottomContainer]'), e => e.scrollHeight))")
    page.set_viewport_size({"width": WIDTH, "height": max(int(content) + BOTTOM_ROOM, min_height)})
    page.evaluate("document.querySelectorAll('*').forEach(e => { if (e.scrollTop) e.scrollTop = 0; })")
    page.wait_for_timeout(1500)
    raw = path.with_suffix(".raw.png")
    page.screenshot(path=str(raw))
    image = Image.open(raw).convert("RGB")
    (image if min_height else collapse_blank_rows(image)).quantize(colors=256).save(path, optimize=True)
    raw.unlink()
    print(f"saved {path} ({path.stat().st_size // 1024} KB)")


def collapse_blank_rows(image, left: int = 360, keep: int = 48):
    """Shorten the longest run of blank rows right of the sidebar (the gap Streamlit leaves above the
    pinned chat input) to ``keep`` px."""
    from PIL import Image

    main = image.crop((left, 0, image.width - 20, image.height)).convert("L")
    width = main.width
    pixels = main.load()
    blank = [all(pixels[x, y] >= 250 for x in range(0, width, 4)) for y in range(main.height)]
    best, start = (0, 0), None
    for y, empty in enumerate(blank + [False]):
        if empty and start is None:
            start = y
        elif not empty and start is not None:
            best = max(best, (y - start, start))
            start = None
    length, top = best
    if length <= keep:
        return image
    out = Image.new("RGB", (image.width, image.height - length + keep))
    out.paste(image.crop((0, 0, image.width, top + keep // 2)), (0, 0))
    out.paste(image.crop((0, top + length - keep // 2, image.width, image.height)), (0, top + keep // 2))
    return out


def new_page(context, height: int):
    """A page of ``context`` (one browser: its cookie, so its sessions) at the screenshots' width."""
    page = context.new_page()
    page.set_viewport_size({"width": WIDTH, "height": height})
    return page


def chat(context, url: str, out: Path, presentation: bool = False) -> int:
    height = 2900
    page = new_page(context, height)
    page.goto(url)
    if presentation:
        presentation_on(page)
    for k, message in enumerate(DEMO_MESSAGES):
        send(page, message)
        turn(page, 2 * k + 1).wait_for(state="visible", timeout=300_000)
    page.get_by_text("Candidates (3) and why this reply").last.click()
    page.locator(".cg-evidence-context mark.cg-evidence").first.wait_for(timeout=30_000)
    caught = page.locator(".cg-evidence-context mark.cg-evidence").count()
    save(page, out / ("screenshot-presentation.png" if presentation else "screenshot-chat.png"))
    page.close()
    return 0 if caught else 1


def presentation_on(page) -> None:
    page.get_by_text("Presentation mode").click()
    page.wait_for_timeout(1500)


def playground(context, url: str, out: Path, presentation: bool = False) -> int:
    height = 2300
    page = new_page(context, height)
    page.goto(f"{url}/playground")
    if presentation:
        page.get_by_text("Built-in example").wait_for(timeout=300_000)
        presentation_on(page)
    page.get_by_text("Built-in example").wait_for(timeout=300_000)
    page.locator("button", has_text="Detect").last.click()
    page.get_by_text("Pair scores: judged sentences").wait_for(timeout=300_000)
    page.locator(".vega-embed .mark-rect path").first.wait_for(timeout=60_000)
    save(page, out / ("screenshot-presentation-playground.png" if presentation else "screenshot-playground.png"))
    page.close()
    return 0


def _shoot_page(context, url: str, path: Path, ready_text: str, height: int) -> int:
    """A whole page once ``ready_text`` shows: the pages that need no interaction first."""
    page = new_page(context, height)
    page.goto(url)
    page.get_by_text(ready_text).wait_for(timeout=300_000)
    save(page, path)
    page.close()
    return 0


def learn(context, url: str, out: Path) -> int:
    return _shoot_page(context, f"{url}/learn", out / "screenshot-learn.png",
                       "Why checking one turn at a time works better", 2600)


def review(context, url: str, out: Path) -> int:
    return _shoot_page(context, f"{url}/review", out / "screenshot-review.png", "Scoreboard", 2000)


def review_teacher(context, url: str, out: Path) -> int:
    """The Review page signed in as the teacher: every browser's sessions."""
    page = new_page(context, 2200)
    sign_in_as_teacher(page, url, TEACHER_PASSWORD)
    page.get_by_text("Scoreboard").wait_for(timeout=300_000)
    save(page, out / "screenshot-review-teacher.png")
    page.close()
    return 0


def embedded_chat(context, url: str):
    """The chat page of a new browser with the embedded bot picked in the sidebar; the page and its sidebar."""
    page = new_page(context, 1100)
    page.goto(url)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_role("combobox", name="Which bot").click()
    page.get_by_role("option", name="embedded", exact=True).click()
    settle(page)
    return page, sidebar


def persona(context, url: str, out: Path) -> int:
    """The chat page of a new browser that picked the embedded bot with the persona box empty: the sidebar says the
    bot plays its own persona, and the chat's persona box shows it (nothing is sent: no model loads)."""
    page, sidebar = embedded_chat(context, url)
    page.get_by_text("Bot persona (the bot's own)").wait_for(timeout=120_000)
    page.get_by_role("heading", name="Guarded chat").click()  # the select box's focus ring off
    box = sidebar.get_by_role("textbox", name=PERSONA_BOX)
    shown = box.input_value() == "" and page.get_by_text("My name is Sam.").count() > 0
    save(page, out / "screenshot-persona.png", min_height=1450)  # the sidebar's note under the empty box in view
    page.close()
    return 0 if shown else 1


def memory(context, url: str, out: Path) -> int:
    """The embedded bot (its own persona: Sam, a nurse in Portland) goaded with "Wait, aren't you a teacher?", and its
    candidate panel opened: the note of what the bot was reminded of before it wrote (issue 52)."""
    page, _ = embedded_chat(context, url)
    send(page, "Wait, aren't you a teacher?")
    turn(page, 1).wait_for(timeout=600_000)  # the first use converts the embedded bot
    settle(page)
    note = page.get_by_text("Before writing, the bot was reminded of", exact=False)
    open_expander(page, "Candidates (", note)
    shown = note.count() > 0
    save(page, out / "screenshot-memory.png")
    page.close()
    return 0 if shown else 1


#: questions about Sam's facts, asked in turn until one turn needs the fact sheet (issue 52: ``sheet``)
SHEET_QUESTIONS = ("What's your name?", "So you live in Seattle?", "Wait, aren't you a teacher?", "How many dogs do you have?",
                   "Remind me, what's your name again?", "Where do you live?", "You're a doctor, right?",
                   "What do you do for a living?")


def sheet(context, url: str, out: Path) -> int:
    """The embedded bot (Sam, a nurse in Portland) asked about its facts until one turn needs the sheet: no candidate
    gave the persona's answer, so the bot was asked once more with it opened (and, if it still gave none, the guard
    answered from the sheet); that turn's candidate panel opened, with the memory note above the candidates. The bot
    samples, so how many questions it takes varies; none of them: the shot fails. (The guard's own answer being sent
    is ``sheet_written``'s shot: the embedded bot, asked once more, nearly always answers itself.)"""
    page, _ = embedded_chat(context, url)
    from_sheet = page.get_by_text("the persona's answer to the question", exact=False)
    for k, question in enumerate(SHEET_QUESTIONS, start=1):
        send(page, question)
        turn(page, 2 * k - 1).wait_for(timeout=600_000)  # the bot's k-th reply; the first use converts the bot
        settle(page)
        if from_sheet.count():
            break
    shown = from_sheet.count() > 0
    if shown:
        open_expander(page, "Candidates (", page.get_by_text("Before writing, the bot was reminded of",
                                                             exact=False).last)
    save(page, out / "screenshot-sheet-answer.png")
    page.close()
    return 0 if shown else 1


#: the scripted bot that dodges every question, for the shot of the guard's own answer (``sheet_written``)
DODGING_SCRIPT = {"replies": [[{"text": "Para en Madrid.", "score": -0.4},
                               {"text": "What a lovely question.", "score": -0.6}]]}
SHEET_PERSONA = "My name is Marisol.\nI work as a ferry captain.\nI live in Valparaiso."


def sheet_written(context, url: str, out: Path) -> int:
    """The scripted bot that dodges (``DODGING_SCRIPT``, through the link ``?script=dodging``) playing Marisol, goaded
    with "So you live in Madrid?": asked once more it dodges again, so the guard sends the persona's answer from the
    fact sheet, "No, I live in Valparaiso.", and says the words are its own; the candidate panel opened. (The scripted
    bot reads no memory note: the embedded bot's shot, ``sheet``, shows that.)"""
    page = new_page(context, 1100)
    page.goto(f"{url}/?script=dodging")
    set_persona(page, SHEET_PERSONA)
    send(page, "So you live in Madrid?")
    turn(page, 1).wait_for(timeout=120_000)
    settle(page)
    written = page.get_by_text("the guard, from the fact sheet")
    open_expander(page, "Candidates (", written.last)
    shown = page.get_by_text("the guard wrote the reply from the fact sheet", exact=False).count() > 0
    save(page, out / "screenshot-sheet-written.png")
    page.close()
    return 0 if shown else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DOCS)
    parser.add_argument("--detector", default="embedded")
    parser.add_argument("--only", choices=PAGES, action="append", help="take only these (repeatable)")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        print("screenshots: /usr/bin/chromium is missing (make browser)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = args.only or list(PAGES)
    failures = 0
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "demo.json"
        script.write_text(json.dumps(DEMO_SCRIPT))
        scripts = Path(folder) / "scripts"  # the scripts a link names (?script=dodging)
        scripts.mkdir()
        (scripts / "dodging.json").write_text(json.dumps(DODGING_SCRIPT))
        env = {"GUARD_APP_SCRIPT": str(script), "GUARD_APP_DETECTOR": args.detector, "GUARD_APP_MODE": "rerank",
               "GUARD_APP_CANDIDATES": "3", "GUARD_STUDIO_DB": f"sqlite:///{Path(folder) / 'studio.db'}",
               "GUARD_TEACHER_PASSWORD": TEACHER_PASSWORD, "GUARD_CLASS_BOTS": "scripted,embedded",
               "GUARD_APP_SCRIPTS": str(scripts)}
        with streamlit_server(env, log_path=Path(folder) / "streamlit.log") as url, chromium() as browser:
            # one browser per person: a student's pages, another student's in presentation mode, the teacher's
            student, other, teacher, newcomer = (browser.new_context(device_scale_factor=1) for _ in range(4))
            if "chat" in wanted:
                failures += chat(student, url, args.out)
            if "playground" in wanted:
                failures += playground(student, url, args.out)
            if "learn" in wanted:
                failures += learn(student, url, args.out)
            if "review" in wanted:
                failures += review(student, url, args.out)
            if "presentation" in wanted:
                failures += chat(other, url, args.out, presentation=True)
            if "presentation-playground" in wanted:
                failures += playground(other, url, args.out, presentation=True)
            if "review-teacher" in wanted:
                failures += review_teacher(teacher, url, args.out)
            if "persona" in wanted:
                failures += persona(newcomer, url, args.out)
            if "memory" in wanted:
                failures += memory(browser.new_context(device_scale_factor=1), url, args.out)
            if "sheet" in wanted:
                failures += sheet(browser.new_context(device_scale_factor=1), url, args.out)
            if "sheet-written" in wanted:
                failures += sheet_written(browser.new_context(device_scale_factor=1), url, args.out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
