"""What the detector's two other checks compared, under a verdict: the parts of the last turn against each other
(intra-sentence) and who the last turn sounds like (role confusion). Plain words first; the papers' names are one
click away (help), and the Learn page's ``plain`` version names none of them."""

from __future__ import annotations

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
        clauses, pairs = said_pairs(intra, said)
        best, line = score_and_threshold(intra.score, intra.threshold)
        st.markdown(f"**Inside the last turn** · {len(clauses)} part(s), strongest clash {best} (flags from "
                    f"{line})", help="Technical: the intra-sentence check (CDConv's intra category): every pair of the "
                                     "turn's clauses scored by the NLI detector, at the detector's own threshold for "
                                     "clauses of one turn.")
        if pairs:
            show_table([{"part A": p.premise, "part B": p.hypothesis, "score": round(p.score, 3)}
                        for p in pairs])
        else:
            st.caption("one part only: nothing inside the turn to compare")
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
        clauses, pairs = said_pairs(intra, said)
        if pairs:
            strongest = max(p.score for p in pairs)
            shown, line = percents(strongest, intra.threshold)
            st.markdown(f"**Inside the last turn**: the detector cut it into {len(clauses)} short statements "
                        f"and compared each pair. The strongest clash is {shown}; it calls a clash inside one "
                        f"turn from {line} on.")
            show_table([{"statement A": p.premise, "statement B": p.hypothesis,
                         "clash": percents(p.score, intra.threshold)[0]} for p in pairs])
        else:
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
