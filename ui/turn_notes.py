"""What a bot turn's live view and candidate panel say in words (pure, no Streamlit): the reminder as it happens, and
the candidates the classroom filter kept back."""

from __future__ import annotations

from conversation.classroom import teacher_line
from guard.judge.report import BotTurnReport
from guard.judge.wording import reminding_phrase
from ui.render import escape_markdown


def reminding_line(reminder) -> str:
    """The live view's line when the guard reminds the bot (Markdown; the words are ``wording.reminding_phrase``'s)."""
    return "🔁 " + escape_markdown(reminding_phrase(reminder))


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
