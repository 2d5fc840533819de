"""The bot's fact sheet on the pages (issue 41): in the chat above the transcript, under the playground's verdict and
on the Learn page. The rows and their clash marks are ``ui.fact_sheet``'s (pure); this draws them."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from conversation.records import BOT, ChatSettings, Conversation
from embedded import MissingAssetError
from guard.judge.verdicts import Verdict
from guard.language.fact_sheet import FactSheet
from guard.language.grammar import PAST, PRESENT
from guard.records import Dialogue
from guard.vocabulary import PremiseSource
from ui.fact_sheet import (
    FACT_ICON,
    SHEET_HEADING,
    SeenClash,
    SheetRow,
    candidate_clashes,
    chat_clashes,
    clash_words,
    distinct_clashes,
    fact_words,
    sheet_html,
    sheet_rows,
    sheet_summary,
)
from ui.render import escape_markdown
from ui.verdict_checks import chat_sheet_note

#: the chat's sheet box (open by default; closed, it reads nothing)
CHAT_SHEET_KEY = "fact_sheet::chat"
#: how long a run with turns waits for spaCy and WordNet (the start-up warm-up loads them) before the sheet says later
LANGUAGE_TOOLS_WAIT_S = 30.0


def show_sheet(rows: Sequence[SheetRow], plain: bool = False, columns: Sequence[str] = ("about", "value", "where"),
               summary: bool = True) -> None:
    """The rows as the compact table, with a one-line count of facts and clashes above it."""
    if summary:
        st.caption(escape_markdown(sheet_summary(rows)))
    st.html(sheet_html(rows, plain, columns))


def chat_sheet(conversation: Conversation, settings: ChatSettings) -> None:
    """The chat's sheet: every fact the bot has stated (its persona, its sent replies), a clash marked on the fact a
    sent reply or a candidate gave another value (this turn or earlier); whether the chat's guard acts on it. Nothing
    while there is nothing to read (no persona, no bot turn)."""
    bot_turns = [t.turn_id for t in conversation.turns if t.agent_id == BOT]
    if not conversation.persona and not bot_turns:
        return
    box = st.expander(SHEET_HEADING, expanded=True, key=CHAT_SHEET_KEY, on_change="rerun", icon=FACT_ICON)
    with box:
        if not box.open:
            return
        from ui.suggestions import language_tools_ready  # the chat's: the playground and Learn need no assistant

        # a first page view never waits seconds for them before the first message; a turn's run (the reply is on
        # screen by now) waits a while, so the sheet does not grow under the reader a run later
        if not language_tools_ready(wait=LANGUAGE_TOOLS_WAIT_S if conversation.turns else 0.0):
            st.caption("⏳ The language tools that read the bot's facts are still loading: the sheet appears with "
                       "the next message.")
            return
        try:
            sheet = conversation.fact_sheet()  # the guard's reading, carried by the last turn's report
        except MissingAssetError as exc:
            st.caption(escape_markdown(f"The sheet cannot be read here: {str(exc).splitlines()[0][:200]}"))
            return
        if sheet is None:
            st.caption("The guard read no facts for the last reply (it was off, or its detector's fact check is off).")
            return
        rows = sheet_rows(sheet, chat_clashes(conversation.turns, sheet, BOT))
        if rows:
            show_sheet(rows)
        else:
            st.caption("Nothing yet of the kinds of fact it reads (name, age, where it lives or grew up, job, how "
                       "many pets, children or siblings, diet, what it never did).")
        note = chat_sheet_note(_chat_checks(settings), settings.guard_mode)
        st.caption(escape_markdown(note), help="Red: a reply that was sent gives the fact another value. Amber: only "
                   "a candidate the guard did not send did. Hover over a row for the sentence that stated it.\n\n"
                   "Technical: guard.language.fact_sheet, DNLI's (relation, value) triples read with spaCy and WordNet; a "
                   "single-valued relation given another value clashes.")


def _chat_checks(settings: ChatSettings):
    """The checks the chat's next turn runs: those the detector's calibration kept (None: unknown, the config
    unreadable; the sidebar says why)."""
    from guard.config import ConfigError
    from guard.models.registry import read_config

    try:
        return read_config(settings.detector).checks
    except (ConfigError, OSError, ValueError):
        return None


def dialogue_sheet(dialogue: Dialogue, verdict: Verdict | None, whole: FactSheet | None,
                   plain: bool = False) -> FactSheet | None:
    """A judged dialogue's sheet (``whole``: the guard's reading with the last turn said, ``Guard.judge_dialogue``;
    None: the guard read no facts): what the last turn's speaker said about themselves before it (and its persona),
    the last turn's clashes (its verdict's) marked on the facts; then each clash in words."""
    last = dialogue.last
    if whole is None:
        st.caption("The guard read no facts for this dialogue (its detector's fact check is off).")
        return None
    judged = [f for f in whole.facts if f.source == PremiseSource.HISTORY and f.turn_id == last.turn_id]
    sheet = FactSheet(tuple(f for f in whole.facts if f not in judged))
    clashes = distinct_clashes(verdict.details.fact_clashes) if verdict is not None else []
    rows = sheet_rows(sheet, [SeenClash(c, "the last turn", True) for c in clashes], plain)
    who = "the bot" if plain else last.agent_id
    if rows:
        show_sheet(rows, plain, ("about", "said", "where") if plain else ("about", "value", "where"), summary=False)
    else:
        st.caption(escape_markdown(f"Nothing {who} said before the last turn is a fact of the kinds the sheet reads."))
    if judged:
        # a fact read twice (once with the question, once from the sentence alone) is said once
        words = dict.fromkeys(fact_words(f) + ("" if f.time == PRESENT else
                                               f" ({'in the past' if f.time == PAST else 'a wish'})") for f in judged)
        st.caption(escape_markdown("The last turn reads as: " + "; ".join(words)))
    if clashes:
        for clash in clashes:
            st.markdown("✘ " + escape_markdown(f"Clash: {clash_words(clash, plain)}. The last turn says "
                                               f"“{clash.said.said}”"))
    elif verdict is not None and verdict.details.fact_confidence is not None and rows:
        st.caption("The last turn gives none of these facts another value.")
    return sheet


def show_candidate_clashes(cand) -> None:
    """Under a candidate in the candidate panel: each fact it gives another value, with both values."""
    for clash in distinct_clashes(candidate_clashes(cand)):
        st.markdown(f"{FACT_ICON} " + escape_markdown(f"Clashes with the fact sheet: {clash_words(clash)}"),
                    help="What the bot said about itself before (the sheet above) vs this candidate.")
