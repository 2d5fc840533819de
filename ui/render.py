"""Pure rendering helpers: escaping, evidence highlighting, a turn as HTML (tables and heatmap frames:
``ui.tables``).

Everything the app shows that came from a user or a model passes through ``html.escape`` (HTML)
or ``escape_markdown`` (Markdown) here, so the pages never build markup from raw text.
No Streamlit import: these are unit-tested on their own.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from guard.judge.verdicts import PairScore
from guard.vocabulary import PremiseSource, describe_source
from ui.styles import BADGE_STYLE, POSSIBLE_BADGE_STYLE, STYLES, TURN_LABEL_STYLE

# CommonMark lets any ASCII punctuation be backslash-escaped; these are the ones Markdown (and
# Streamlit's extensions: $ for LaTeX, : for emoji shortcodes, ~ for strikethrough) act on.
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=])")


def escape_markdown(text: str) -> str:
    """Backslash-escape Markdown specials so user text renders literally in st.markdown."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", text)


@dataclass(frozen=True)
class Mark:
    """A stretch of text to highlight and the visible badge that says why.

    ``needle`` is the exact (sentence/clause) text the detector compared; it is located in the
    turn's text, tolerating the clause splitter's clean-up (case, spacing around punctuation,
    dropped joiners such as "but").
    """

    needle: str
    label: str
    kind: str = "evidence"  # evidence | clause | intra | removed | possible
    tooltip: str = ""  # shown on hover over the badge (what the badge's colour means, measured)


@dataclass
class DialogueMarks:
    """Highlights for a transcript: marks per turn id and per persona line (0-based index)."""

    turns: dict[int, list[Mark]] = field(default_factory=dict)
    persona: dict[int, list[Mark]] = field(default_factory=dict)

    def on_turn(self, turn_id: int, *marks: Mark) -> None:
        self.turns.setdefault(turn_id, []).extend(marks)

    def on_premise(self, source: PremiseSource, turn_id: int, *marks: Mark) -> None:
        """Marks where a pair's premise is (its ``source`` and ``turn_id``, as in guard.judge.verdicts.PairScore):
        its turn (an intra pair's: the judged turn) or persona line."""
        if source == PremiseSource.WHOLE_HISTORY:
            raise ValueError("the whole-history premise is no single turn to mark")
        target = self.persona if source == PremiseSource.PERSONA else self.turns
        target.setdefault(turn_id, []).extend(marks)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+(?:'\w+)?", text.lower())


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """A span grown to whole words, so a highlight never starts or ends inside one ("I'|ve" becomes "I've": the
    clause splitter can hand over "'ve never been to France")."""
    def inside(i: int) -> bool:  # position i is between two characters of one word
        return 0 < i < len(text) and (text[i - 1].isalnum() or text[i - 1] in "'’") and \
            (text[i].isalnum() or text[i] in "'’")

    while start > 0 and inside(start):
        start -= 1
    while end < len(text) and inside(end):
        end += 1
    return start, end


def locate(text: str, needle: str) -> tuple[int, int] | None:
    """Character span of ``needle`` inside ``text`` (grown to whole words), or None when it is not there."""
    found = _locate(text, needle)
    return None if found is None else _widen(text, *found)


def _locate(text: str, needle: str) -> tuple[int, int] | None:
    needle = needle.strip()
    if not needle or not text:
        return None
    at = text.find(needle)
    if at >= 0:
        return at, at + len(needle)
    at = text.lower().find(needle.lower())
    if at >= 0:
        return at, at + len(needle)
    words = _words(needle)
    if not words:
        return None
    # Same words in order, with any punctuation/spacing between them.
    pattern = r"\W+".join(re.escape(w) for w in words)
    found = re.search(pattern, text, flags=re.IGNORECASE)
    if found:
        return found.start(), found.end()
    # Last resort: the stretch of text that shares most characters with the needle.
    low = text.lower()
    matcher = difflib.SequenceMatcher(None, low, needle.lower(), autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size >= 3]
    covered = sum(b.size for b in blocks)
    if blocks and covered >= 0.7 * len(needle):
        return blocks[0].a, blocks[-1].a + blocks[-1].size
    return None


def highlight_html(text: str, marks: Iterable[Mark]) -> str:
    """Escaped HTML of ``text`` with each mark wrapped in <mark> and followed by a badge.

    Overlapping marks merge into one highlight carrying every label. A mark whose needle cannot
    be located highlights the whole text (the detector compared it, so the user must see it).
    """
    spans: list[tuple[int, int, str, list[str]]] = []
    tooltips = {m.label: m.tooltip for m in marks if m.tooltip}
    for mark in marks:
        where = locate(text, mark.needle) or (0, len(text))
        spans.append((where[0], where[1], mark.kind, [mark.label]))
    spans.sort(key=lambda s: (s[0], -s[1]))
    merged: list[tuple[int, int, str, list[str]]] = []
    for start, end, kind, labels in spans:
        if merged and start < merged[-1][1]:
            m_start, m_end, m_kind, m_labels = merged[-1]
            merged[-1] = (m_start, max(m_end, end), m_kind, m_labels + [label for label in labels if label not in m_labels])
        else:
            merged.append((start, end, kind, labels))
    out: list[str] = []
    cursor = 0
    for start, end, kind, labels in merged:
        out.append(escape_text(text[cursor:start]))
        title = html.escape("; ".join(labels), quote=True)
        out.append(
            f'<mark class="cg-{kind}" style="{STYLES.get(kind, STYLES["evidence"])}" title="{title}">'
            f"{escape_text(text[start:end])}</mark>"
        )
        for label in labels:
            style = POSSIBLE_BADGE_STYLE if kind == "possible" else BADGE_STYLE
            tip = f' title="{html.escape(tooltips[label], quote=True)}"' if label in tooltips else ""
            out.append(f'<span class="cg-badge cg-badge-{kind}" style="{style}"{tip}>{html.escape(label)}</span>')
        cursor = end
    out.append(escape_text(text[cursor:]))
    return "".join(out)


def escape_text(text: str) -> str:
    """Text as HTML: escaped, its line breaks kept."""
    return html.escape(text).replace("\n", "<br>")


def turn_html(speaker: str, text: str, marks: Sequence[Mark] = (), turn_id: int | None = None,
              show_id: bool = False, source: PremiseSource = PremiseSource.HISTORY, in_panel: bool = False) -> str:
    """One transcript turn (or, with ``source=persona``, persona line ``turn_id``) as a small HTML
    block: the highlighted text, and optionally a "turn N" / "persona line N" label so the badges'
    turn numbers can be found. ``in_panel``: a copy quoted inside a candidate's panel, marked
    ``cg-context`` (with data-context-* ids) so the transcript's own turns stay unique."""
    attribute = "data-persona-line" if source == PremiseSource.PERSONA else "data-turn-id"
    if in_panel:
        attribute = attribute.replace("data-", "data-context-")
    ident = f' {attribute}="{int(turn_id)}"' if turn_id is not None else ""
    css = "cg-context" if in_panel else "cg-turn"
    if marks:
        css += " cg-has-evidence"
    body = (f'<div class="{css}"{ident} style="line-height:1.6;overflow-wrap:anywhere">'
            f"{highlight_html(text, marks)}</div>")
    if show_id and turn_id is not None:
        body = (f'<div class="cg-turn-label" style="{TURN_LABEL_STYLE}">'
                f"{html.escape(speaker)} · {html.escape(describe_source(source, turn_id))}</div>" + body)
    return body


def plain_source(pair: PairScore) -> str:
    """Where an earlier sentence was said, as the Learn page names it: "turn 3", or "line 1 of the bot's
    description" for a persona line (the page calls the persona the bot's description everywhere, its fact sheet
    too; issue 54: the badge said "persona line 1" under a text that said "the bot's description")."""
    if pair.source == PremiseSource.PERSONA and pair.turn_id is not None:
        return f"line {pair.turn_id + 1} of the bot's description"
    return describe_source(pair)


def evidence_marks(evidence: Sequence[PairScore], own_turn_id: int, who: str = "the last turn",
                   plain: bool = False) -> DialogueMarks:
    """Marks for a dialogue from a verdict's evidence pairs (source, turn_id, premise,
    hypothesis, score): earlier turns and persona lines get ``evidence`` marks, the judged turn its
    contradicting clause (``clause``) or, for pairs inside itself, both clashing clauses (``intra``).
    ``plain``: badges in a class's words ("98% sure: the last turn contradicts this") instead of scores."""
    marks = DialogueMarks()
    for ev in evidence:
        sure = f"{ev.score * 100:.0f}% sure"
        if ev.source == PremiseSource.INTRA:
            label = (f"clashes with another part of {who} ({sure})" if plain
                     else f"clashes inside {who} (p={ev.score:.2f})")
            marks.on_turn(own_turn_id, Mark(ev.premise, label, "intra"), Mark(ev.hypothesis, label, "intra"))
            continue
        if ev.source == PremiseSource.WHOLE_HISTORY:  # the unstructured baseline's pair has no single turn
            continue
        marks.on_premise(ev.source, ev.turn_id, Mark(ev.premise, f"{sure}: {who} contradicts this" if plain
                                                     else f"p={ev.score:.2f} · contradicted by {who}"))
        marks.on_turn(own_turn_id, Mark(ev.hypothesis, f"contradicts {plain_source(ev)} ({sure})" if plain
                                        else f"contradicts {describe_source(ev)} (p={ev.score:.2f})", "clause"))
    return marks


def tau_words(threshold: float | None) -> str:
    """A threshold τ as a caption says it: to the four places calibrations are kept, or "unknown" when the detector's
    config is unusable (the sidebar says why)."""
    return "unknown (see the sidebar)" if threshold is None else f"{threshold:.4f}"
