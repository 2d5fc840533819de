"""What the detector's two other checks compared, under a verdict: the parts of the last turn against each other
(intra-sentence) and who the last turn sounds like (role confusion). Plain words first; the papers' names are one
click away (help), and the Learn page's ``plain`` version names none of them."""

from __future__ import annotations

import streamlit as st

from guard.policies import score_and_threshold
from guard.verdicts import Verdict
from guard.vocabulary import Category, describe_source
from ui.render import escape_markdown
from ui.widgets import percents, show_table


def show_category_checks(verdict: Verdict, plain: bool = False) -> None:
    """What the intra-sentence and role-confusion checks compared; ``plain``: in a class's words."""
    if plain:
        _plain_category_checks(verdict)
        return
    intra, role = verdict.details.intra, verdict.details.role
    if intra is not None:
        best, line = score_and_threshold(intra.score, intra.threshold)
        st.markdown(f"**Inside the last turn** · {len(intra.clauses)} part(s), strongest clash {best} (flags from "
                    f"{line})", help="Technical: the intra-sentence check (CDConv's intra category): every pair of the "
                                     "turn's clauses scored by the NLI detector, at the detector's own threshold for "
                                     "clauses of one turn.")
        if intra.pairs:
            show_table([{"part A": p.premise, "part B": p.hypothesis, "score": round(p.score, 3)}
                        for p in intra.pairs])
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


def _plain_category_checks(verdict: Verdict) -> None:
    """The two checks of section 2 of the Learn page, as a class reads them: the last turn's parts compared with
    each other, and who the last turn sounds like."""
    intra, role = verdict.details.intra, verdict.details.role
    if intra is not None:
        if intra.pairs:
            strongest, line = percents(intra.score, intra.threshold)
            st.markdown(f"**Inside the last turn**: the detector cut it into {len(intra.clauses)} short statements "
                        f"and compared each pair. The strongest clash is {strongest}; it calls a clash inside one "
                        f"turn from {line} on.")
            show_table([{"statement A": p.premise, "statement B": p.hypothesis,
                         "clash": percents(p.score, intra.threshold)[0]} for p in intra.pairs])
        else:
            st.caption("Inside the last turn: one statement only, so nothing in it to compare.")
    if role is not None and role.decided:
        user, bot = percents(role.user_reading, role.role_threshold)[0], f"{role.bot_reading * 100:.0f}%"
        st.markdown(f"**Who is speaking?** How well the last turn follows from what the user said: {user}; from "
                    f"what the bot said: {bot}. The detector calls it a mix-up of who is who only when the user's side "
                    f"reaches {role.role_threshold * 100:.0f}% and wins.")
        pair = role.user_pair
        if pair is not None:
            st.caption(escape_markdown(f'Closest words of the user ({describe_source(pair)}): "{pair.premise}" → '
                                       f'"{pair.hypothesis}"'))


#: the checks beside the history check, in a class's words
CHECK_WORDS = {"intra": "a reply clashing with itself", "own_question": "the bot answering the question it asked back",
               "role": "naming role confusion"}


def every_check_note(kept) -> str:
    """What a page that runs every check says about those the chat leaves off (``kept``: the checkpoint's
    ``GuardConfig.checks``, the ones that earned their place under the chat's false-alarm budget)."""
    off = [CHECK_WORDS[c] for c in CHECK_WORDS if c not in {str(k) for k in kept}]
    if not off:
        return "Every check runs here, as in the chat."
    return ("Every check runs here. The chat leaves some off because they did not catch enough real contradictions "
            f"for the false alarms they raise on real bot turns: {', '.join(off)}.")
