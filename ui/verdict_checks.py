"""What the detector's two other checks compared, under a verdict: the parts of the last turn against each other
(intra-sentence) and who the last turn sounds like (role confusion). Plain words first; the papers' names are one
click away (help), and the Learn page's ``plain`` version names none of them."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from guard.judge.verdicts import Verdict
from guard.judge.wording import score_and_threshold
from guard.vocabulary import Category, Check, GuardMode, describe_source
from ui.render import escape_markdown
from ui.widgets import percents, show_table


def said_pairs(intra, said: str | None) -> tuple[list[str], list]:
    """The turn's parts and the pairs of them the intra check compared, those the speaker said only: an answer read
    with its question adds its reading as a part ("i'm a doctor." after "what do you do?" is also read as "I work as
    a doctor."), which a table must not show as something the bot said. ``said``: the turn's own words (None: all)."""
    if said is None:
        return list(intra.clauses), list(intra.pairs)
    words = " ".join(said.lower().split())

    def own(part: str) -> bool:
        return " ".join(part.lower().split()) in words

    return [c for c in intra.clauses if own(c)], [p for p in intra.pairs if own(p.premise) and own(p.hypothesis)]


@dataclass(frozen=True)
class IntraLines:
    """What a page says about the intra-sentence check, every number drawn from the pairs it shows (issue 54: the
    line said "2 part(s), strongest clash 0.92" above one row of 0.007 and beside "one part only")."""

    parts: int  # the turn's parts said by the speaker (the table's)
    pairs: list  # the pairs of them compared (the table's rows)
    strongest: float | None  # the highest of those pairs, None without pairs
    reading_score: float | None  # the check's own score where a pair with the turn's reading beat every shown pair


def intra_lines(intra, said: str | None) -> IntraLines:
    """The parts, pairs and strongest clash a page shows for ``intra``; ``reading_score``: the check's score when it
    came from a pair with the turn read as an answer to its question (``said_pairs`` leaves those out of the table),
    so that the page says what that other number is instead of printing it as the table's strongest."""
    clauses, pairs = said_pairs(intra, said)
    strongest = max((p.score for p in pairs), default=None)
    beaten = intra.pairs and (strongest is None or intra.score > strongest)
    return IntraLines(len(clauses), list(pairs), strongest, intra.score if beaten else None)


def intra_headline(lines: IntraLines, threshold: float) -> str:
    """The intra check's line over its table (markdown): how many parts, the strongest clash between two of them
    against the line it flags from; "one part only" when there is nothing inside the turn to compare."""
    if lines.strongest is None:
        what = ("one part only: nothing inside the turn to compare" if lines.parts <= 1 else
                f"{lines.parts} parts, no pair of them compared")
        return f"**Inside the last turn** · {what}"
    best, line = score_and_threshold(lines.strongest, threshold)
    return (f"**Inside the last turn** · {lines.parts} parts, the strongest clash between two of them {best} "
            f"(a clash from {line})")


def reading_note(lines: IntraLines) -> str:
    """Under the table, when the check's own score is not the table's strongest: what that score is."""
    if lines.reading_score is None:
        return ""
    shown = f"{lines.reading_score:.2f}"
    return (f"The check's own score, {shown}, is for the turn read as an answer to the question before it (\"I'm a "
            "doctor.\" read as \"I work as a doctor.\"), which is not a part the speaker said, so it is not a row here.")


def show_category_checks(verdict: Verdict, plain: bool = False, said: str | None = None,
                         who_speaks: str = "explain") -> None:
    """What the intra-sentence and role-confusion checks compared; ``plain``: in a class's words; ``said``: the judged
    turn's own words (the parts a table shows); ``who_speaks`` (``plain`` only): "explain" the who-is-speaking
    reading in full, "numbers" only (the page explained it above), or "" to leave it out."""
    if plain:
        _plain_category_checks(verdict, said, who_speaks)
        return
    intra, role = verdict.details.intra, verdict.details.role
    if intra is not None:
        lines = intra_lines(intra, said)
        st.markdown(intra_headline(lines, intra.threshold),
                    help="Technical: the intra-sentence check (CDConv's intra category): every pair of the turn's "
                         "clauses scored by the NLI detector, at the detector's own threshold for clauses of one turn.")
        if lines.pairs:
            show_table([{"part A": p.premise, "part B": p.hypothesis, "score": round(p.score, 3)}
                        for p in lines.pairs])
        if reading_note(lines):
            st.caption(escape_markdown(reading_note(lines)))
    if role is not None:
        if role.decided:
            pair = role.user_pair
            st.markdown(
                f"**Who is speaking?** · follows from the user's words {role.user_reading:.2f}, from the bot's own "
                f"{role.bot_reading:.2f} (a mix-up when the user's side reaches {role.role_threshold:.2f} and wins)",
                help="Technical: the role-confusion check (CDConv's role category), NLI entailment of the turn from "
                     "the other speaker's and from its own speaker's sentences.")
            if pair is not None:
                st.caption(escape_markdown(f'user {describe_source(pair)}: "{pair.premise}" → "{pair.hypothesis}"'))
        else:
            st.caption(escape_markdown(f"who-is-speaking check not run: {role.why}"))
    elif verdict.contradiction and verdict.category == Category.HISTORY:
        st.caption("who-is-speaking check: not applicable")


def _plain_category_checks(verdict: Verdict, said: str | None, who_speaks: str) -> None:
    """The two checks of section 2 of the Learn page, as a class reads them: the last turn's parts compared with
    each other, and who the last turn sounds like."""
    intra, role = verdict.details.intra, verdict.details.role
    if intra is not None:
        lines = intra_lines(intra, said)
        if lines.strongest is not None:
            shown, line = percents(lines.strongest, intra.threshold)
            st.markdown(f"**Inside the last turn**: the detector cut it into {lines.parts} short statements "
                        f"and compared each pair. The strongest clash is {shown}; it calls a clash inside one "
                        f"turn from {line} on.")
            show_table([{"statement A": p.premise, "statement B": p.hypothesis,
                         "clash": percents(p.score, intra.threshold)[0]} for p in lines.pairs])
        elif lines.parts <= 1:
            st.caption("Inside the last turn: one statement only, so nothing in it to compare.")
    if who_speaks and role is not None and role.decided:
        user, bot = percents(role.user_reading, role.role_threshold)[0], f"{role.bot_reading * 100:.0f}%"
        line = (f"**Who is speaking?** How well the last turn follows from what the user said: {user}; from what the "
                f"bot said: {bot}.")
        if who_speaks == "explain":
            line += (f" The detector calls it a mix-up of who is who only when the user's side reaches "
                     f"{role.role_threshold * 100:.0f}% and is higher than the bot's.")
        st.markdown(line)
        pair = role.user_pair
        if pair is not None:
            st.caption(escape_markdown(f'What the user said that the last turn follows from most '
                                       f'({describe_source(pair)}): "{pair.premise}", beside the last turn\'s '
                                       f'"{pair.hypothesis}"'))


#: the checks beside the history check, in a class's words
CHECK_WORDS = {"intra": "whether a reply clashes with itself",
               "own_question": "whether the bot answers a question it asked back",
               "role": "whether the bot mixes up who is who",
               "facts": "whether a reply gives a fact the bot stated about itself another value"}


def every_check_note(kept) -> str:
    """What a page that runs every check says about those the chat leaves off (``kept``: the checkpoint's
    ``GuardConfig.checks``, the ones that earned their place under the chat's false-alarm budget)."""
    off = [CHECK_WORDS[c] for c in CHECK_WORDS if c not in {str(k) for k in kept}]
    if not off:
        return "This page runs all of the detector's checks, the same ones the chat runs."
    return ("This page runs all of the detector's checks. The chat skips some of them, because on real chats they "
            f"raised more false alarms than the contradictions they caught: {' and '.join(off)}.")


def chat_sheet_note(kept, mode) -> str:
    """Under the chat's fact sheet: whether the chat's guard acts on it (``kept``: the checks the detector's
    calibration kept, None when unknown; ``mode``: the guard mode), in the words ``every_check_note`` uses."""
    if mode == GuardMode.OFF:
        return "The guard is off: no reply is checked against this sheet. Red marks a sent reply that disagrees."
    if kept is None:
        return "Red marks a sent reply that gives a fact another value; amber, a candidate that was not sent."
    if str(Check.FACTS) in {str(k) for k in kept}:
        return ("The guard checks every candidate reply against this sheet: one that gives a fact another value is "
                "flagged (red: it was sent all the same; amber: it was not sent).")
    return ("The chat skips this check with this detector (its calibration did not keep it): no candidate is "
            "rejected for it. Red marks a sent reply that gives a fact another value.")
