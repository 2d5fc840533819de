"""What a bot turn's live view and candidate panel say in words (pure, no Streamlit): the reminder as it happens, and
the candidates the classroom filter kept back."""

from __future__ import annotations

from conversation.classroom import teacher_line
from guard.judge.report import BotTurnReport
from guard.vocabulary import describe_source
from ui.render import escape_markdown


def reminding_line(reminder) -> str:
    """The live view's line when the guard reminds the bot: what every candidate contradicted, and how it asks
    again (Markdown, the texts escaped)."""
    how = (f"its reply opened with “{escape_markdown(reminder.opening)}”" if reminder.method == "opening"
           else "the fact restated in its persona")
    if not reminder.facts:  # from the sheet: the user asked about a persona fact no candidate gave
        return (f"🔁 No candidate gives the persona's answer (“{escape_markdown(reminder.fact)}”). The bot is asked "
                f"again, {how}.")
    return (f"🔁 Nothing consistent to send: the candidates contradict {describe_source(reminder.facts[0])} "
            f"(“{escape_markdown(reminder.fact)}”). The bot is asked again, {how}.")


def withheld_notes(report: BotTurnReport, teacher: bool) -> list[str]:
    """What the candidate panel says of the candidates the classroom filter kept back: a student is told only which
    were withheld (the table's row says why, never the text); the signed-in teacher is told why and what was caught
    (the table shows the teacher each one whole). The words are ``conversation.classroom``'s."""
    held = report.withheld
    if not held:
        return []
    if not teacher:
        listed = ", ".join(f"#{c.index + 1}" for c in held)
        return [f"🚫 Candidate{'s' if len(held) > 1 else ''} {listed}: withheld by the classroom filter and never "
                "sent; its text is not shown here. A signed-in teacher can read it."]
    return [f"🚫 Candidate #{c.index + 1}: {teacher_line(c.withheld)}" for c in held]
