"""The bot's fact sheet as the pages show it: one row per fact that holds now ("job — nurse — persona", "dogs — 2 —
persona", "lives in — Paris — turn 3"), and a clash marked on the fact a reply or a candidate gave another value,
and on the fact that did it. Pure (no Streamlit): the facts and clashes come from ``guard.language.fact_sheet`` (the sheet
read from the persona and the bot's turns) and from the verdicts (``VerdictDetails.fact_clashes``); every text
passes through ``html.escape`` here.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from guard.language.fact_sheet import AVOIDS, Fact, FactClash, FactSheet, Relation
from guard.vocabulary import PremiseSource
from ui.styles import FACT_CAUGHT_STYLE, FACT_CLASH_STYLE, FACT_ROW_STYLES

#: the sheet's heading in the chat (issue 41)
SHEET_HEADING = "What the bot has said about itself"
#: the sheet's icon (a Material icon: Streamlit ships its font, so it shows where no emoji font is installed)
FACT_ICON = ":material/fact_check:"


def fact_about(fact: Fact) -> str:
    """What a fact is about, as the sheet's first column says it: "job", "dogs", "lives in", "never", "eats",
    "tortoise's name", "never eats"."""
    if fact.relation == Relation.COUNT:  # "dogs 2": the counted thing, as the guard names it (its plural)
        return fact.counted
    if fact.relation == Relation.DOES:
        return "does" if fact.holds else "never"
    if fact.relation == Relation.DIET and fact.value == "eats":
        return "eats"
    if fact.relation == Relation.DIET and fact.value == AVOIDS:
        return "never eats"
    if fact.relation == Relation.PET_NAME:  # "tortoise's name Pebble"
        return f"{fact.thing}'s name"
    return str(fact.relation)


def fact_value(fact: Fact) -> str:
    """A fact's value, as the sheet's second column says it: "nurse", "2", "none", "at least 1", "not a doctor" →
    "not doctor", "fly" (after "never"), "steak" (after "eats")."""
    if fact.relation == Relation.COUNT:
        if fact.vague:
            return "some"
        value = "none" if fact.value == "0" else fact.value
        return f"{value} ({fact.whole_words})" if fact.whole_of else value  # "at least 1 (of its pets, only tortoises)"
    if fact.relation in (Relation.DOES,) or (fact.relation == Relation.DIET and fact.value in ("eats", AVOIDS)):
        return fact.thing
    return fact.value if fact.holds else f"not {fact.value}"


def fact_words(fact: Fact) -> str:
    """A fact in one short phrase: "dogs 2", "job nurse", "eats steak", "never fly"."""
    return f"{fact_about(fact)} {fact_value(fact)}"


def where_words(fact: Fact, plain: bool = False) -> str:
    """Where a fact came from: "persona" or "turn 3" (``plain``: "the bot's description" for the persona)."""
    if plain and fact.source == PremiseSource.PERSONA:
        return "the bot's description"
    return fact.where


def clash_words(clash: FactClash, plain: bool = False) -> str:
    """A clash in the sheet's words, the candidate's side: "dogs: 2 (persona) vs 12"; the candidate's fact in full
    where it is about another thing ("pets: none (turn 1) vs dogs 2", "diet: vegetarian (persona) vs eats steak")."""
    old, new = clash.sheet, clash.said
    said = fact_value(new) if fact_about(new) == fact_about(old) else fact_words(new)
    return f"{fact_about(old)}: {fact_value(old)} ({where_words(old, plain)}) vs {said}"


def _key(fact: Fact) -> tuple:
    """A fact as the sheet shows it, wherever it was said: one row for "I have two dogs." said twice."""
    return fact.relation, fact.thing, fact.value, fact.holds, fact.vague


def _place(fact: Fact) -> tuple:
    return fact.source, fact.turn_id


@dataclass(frozen=True)
class ClashMark:
    """A clash marked on a sheet row: who gave the fact another value (``who``: "the reply at turn 5", "candidate
    #2 at turn 5"), that value, and whether it was sent (a sent reply's clash is a contradiction the bot made; an
    unsent candidate's is one the guard kept out). ``against``: the mark on the later fact itself ("the reply at
    turn 5 clashes with 2 (persona)"). ``clash``: which clash it marks (who, and both facts as the sheet shows them),
    so that the two marks of one clash are counted once."""

    who: str
    value: str
    sent: bool
    against: bool = False
    clash: tuple = ()

    @property
    def text(self) -> str:
        if self.against:
            return f"{self.who} clashes with {self.value}"
        return f"{self.who} says {self.value}" + ("" if self.sent else " (not sent)")


@dataclass
class SheetRow:
    """One row of the sheet: the fact (the first place it was said), every place it was said, its clash marks."""

    fact: Fact
    places: list[Fact] = field(default_factory=list)
    marks: list[ClashMark] = field(default_factory=list)

    @property
    def about(self) -> str:
        return fact_about(self.fact)

    @property
    def value(self) -> str:
        return fact_value(self.fact)

    def where(self, plain: bool = False) -> str:
        return " · ".join(dict.fromkeys(where_words(f, plain) for f in self.places))

    @property
    def said(self) -> str:
        """The sentences that stated it, in their own words (the row's tooltip)."""
        return " / ".join(dict.fromkeys(f.said for f in self.places))

    @property
    def clashed(self) -> bool:
        return bool(self.marks)

    @property
    def sent_clash(self) -> bool:
        """Whether a reply that was sent clashes with it (not only a candidate the guard kept out)."""
        return any(m.sent for m in self.marks)


@dataclass(frozen=True)
class SeenClash:
    """A clash and who made it: ``who`` in words, ``sent`` whether that text went out, ``turn_id`` the turn it was
    said at (None: the judged turn of a dialogue, not on the sheet)."""

    clash: FactClash
    who: str
    sent: bool
    turn_id: int | None = None


def clash_key(clash: FactClash) -> tuple:
    """A clash as the sheet shows it: both facts, wherever they were said, not the words they were said in (a
    candidate read twice, with its question and alone, records one clash twice)."""
    return clash.relation, _place(clash.sheet), _key(clash.sheet), _key(clash.said)


def distinct_clashes(clashes: Iterable[FactClash]) -> list[FactClash]:
    """``clashes`` with each clash once (``clash_key``), in their order: what a panel prints."""
    kept: dict[tuple, FactClash] = {}
    for clash in clashes:
        kept.setdefault(clash_key(clash), clash)
    return list(kept.values())


def sheet_rows(sheet: FactSheet, clashes: Iterable[SeenClash] = (), plain: bool = False) -> list[SheetRow]:
    """The sheet's rows: one per fact that holds now (a fact said again joins its row), each with the clashes marked
    on it; a sent reply's own fact on the sheet is marked too, with what it clashes with, also where the fact it
    clashed with is no longer on the sheet (a persona edited since): every sent clash is marked somewhere."""
    rows: dict[tuple, SheetRow] = {}
    at: dict[tuple, SheetRow] = {}  # (where, fact) -> its row
    for fact in sheet.current():
        row = rows.setdefault(_key(fact), SheetRow(fact))
        row.places.append(fact)
        at[(_place(fact), _key(fact))] = row
    for seen in clashes:
        old, new = seen.clash.sheet, seen.clash.said
        key = (seen.who, *clash_key(seen.clash))
        row = at.get((_place(old), _key(old)))
        if row is not None:
            value = fact_value(new) if fact_about(new) == fact_about(old) else fact_words(new)
            mark = ClashMark(seen.who, value, seen.sent, clash=key)
            if mark not in row.marks:
                row.marks.append(mark)
        if seen.sent and seen.turn_id is not None:
            own = at.get(((PremiseSource.HISTORY, seen.turn_id), _key(new)))
            gone = "" if row is not None else ", no longer on the sheet"
            back = ClashMark(seen.who, f"{fact_value(old) if fact_about(new) == fact_about(old) else fact_words(old)}"
                                       f" ({where_words(old, plain)}{gone})", True, against=True, clash=key)
            if own is not None and own is not row and back not in own.marks:
                own.marks.append(back)
    return list(rows.values())


def chat_clashes(turns: Sequence, sheet: FactSheet, bot: str) -> list[SeenClash]:
    """The clashes the chat's sheet marks, turn by turn of ``bot``'s: on a turn the guard's fact check ran on (its
    sent reply's verdict has a fact confidence), what the guard recorded for every candidate (``report_clashes``);
    on a turn it did not run on (the guard off, the check off), the sheet's own reading of the reply sent
    (``sent_turn_clashes``). Each sent reply is read once, by one of the two."""
    out: list[SeenClash] = []
    for turn in turns:
        if turn.agent_id != bot:
            continue
        report = getattr(turn, "report", None)
        chosen = next((c for c in report.candidates if c.chosen), None) if report is not None else None
        verdict = getattr(chosen, "verdict", None)
        if verdict is not None and verdict.details.fact_confidence is not None:
            out += report_clashes([turn])
        else:
            out += sent_turn_clashes(sheet, [turn.turn_id])
    return out


def sent_turn_clashes(sheet: FactSheet, turn_ids: Iterable[int]) -> list[SeenClash]:
    """The sheet's own reading of what went out: each listed turn's facts against the facts said before it (the
    persona and earlier turns). Shown whether or not the guard's fact check ran on that turn."""
    out: list[SeenClash] = []
    for turn_id in turn_ids:
        said = [f for f in sheet.facts if f.source == PremiseSource.HISTORY and f.turn_id == turn_id]
        if not said:
            continue
        before = FactSheet(tuple(f for f in sheet.facts if f.source == PremiseSource.PERSONA
                                 or (f.source == PremiseSource.HISTORY and f.turn_id < turn_id)))
        out += [SeenClash(c, f"the reply at turn {turn_id}", True, turn_id) for c in before.clashes(said)]
    return out


def report_clashes(turns: Sequence) -> list[SeenClash]:
    """The fact clashes the guard recorded on every candidate of every bot turn (``VerdictDetails.fact_clashes``,
    there when the fact check ran): the sent reply's and those of the candidates kept out."""
    out: list[SeenClash] = []
    for turn in turns:
        report = getattr(turn, "report", None)
        if report is None:
            continue
        for cand in report.candidates:
            for clash in candidate_clashes(cand):
                sent = cand.chosen and cand.repair is None
                who = f"the reply at turn {turn.turn_id}" if sent else f"candidate #{cand.index + 1} at turn {turn.turn_id}"
                out.append(SeenClash(clash, who, sent, turn.turn_id))
    return out


def candidate_clashes(cand) -> tuple[FactClash, ...]:
    """A candidate's fact clashes, as its verdict recorded them (none when the guard was off or the check did not
    run)."""
    verdict = getattr(cand, "verdict", None)
    return () if verdict is None else tuple(verdict.details.fact_clashes)


#: the unsent values a row shows as chips; the others are counted ("+ 3 more values (not sent)")
UNSENT_CHIPS = 3


@dataclass(frozen=True)
class MarkGroup:
    """The marks of one row that say one thing (sent or not, the same value): one chip with their count."""

    marks: tuple[ClashMark, ...]

    @property
    def sent(self) -> bool:
        return self.marks[0].sent

    @property
    def text(self) -> str:
        first, n = self.marks[0], len(self.marks)
        if n == 1 or first.against:
            return first.text if n == 1 else f"{n} replies sent clash with {first.value}"
        return f"{n} replies sent say {first.value}" if first.sent else f"{n} candidates not sent say {first.value}"


def mark_groups(row: SheetRow) -> list[MarkGroup]:
    """A row's marks grouped by what they say: the sent ones first, then the unsent by how often each value was
    said (issue 54: a job row carried 22 chips, one per candidate)."""
    groups: dict[tuple, list[ClashMark]] = {}
    for mark in row.marks:
        groups.setdefault((mark.sent, mark.against, mark.value), []).append(mark)
    ordered = sorted(groups.values(), key=lambda ms: (not ms[0].sent, -len(ms) if not ms[0].sent else 0))
    return [MarkGroup(tuple(ms)) for ms in ordered]


def _chips(row: SheetRow) -> str:
    groups = mark_groups(row)
    sent = [g for g in groups if g.sent]
    unsent = [g for g in groups if not g.sent]
    shown = sent + unsent[:UNSENT_CHIPS]
    chips = "".join(
        f'<span class="cg-fact-mark cg-fact-mark-{"sent" if g.sent else "caught"}" data-count="{len(g.marks)}" '
        f'style="{FACT_CLASH_STYLE if g.sent else FACT_CAUGHT_STYLE}">✘ {html.escape(g.text)}</span>' for g in shown)
    hidden = len(unsent) - len(shown[len(sent):])
    if hidden:
        chips += (f'<span class="cg-fact-more" style="color:#555;margin-left:0.4em">+ {hidden} more value'
                  f'{"s" if hidden != 1 else ""} (not sent)</span>')
    if hidden or any(len(g.marks) > 1 for g in groups):  # the turns behind the counts, on demand
        items = "".join(f"<li>{html.escape(m.text)}</li>" for m in row.marks)
        chips += (f'<details class="cg-fact-turns" style="font-size:0.85em"><summary>which turns ({len(row.marks)})'
                  f'</summary><ul style="margin:0.2em 0 0.2em 1.2em;padding:0">{items}</ul></details>')
    return chips


def sheet_html(rows: Sequence[SheetRow], plain: bool = False, columns: Sequence[str] = ("about", "value", "where"),
               ) -> str:
    """The sheet as a compact HTML table (class ``cg-fact-sheet``): the fact's subject, value and where it was said,
    its clashes as chips after the value, one per value with its count (red: replies that were sent; amber:
    candidates the guard kept out, the most said three and "+ N more"), every clash in words under "which turns";
    the sentence in its own words on hover. Every text escaped."""
    about, value, where = (html.escape(c) for c in columns)
    head = (f'<tr><th style="{FACT_ROW_STYLES["head"]}">{about}</th><th style="{FACT_ROW_STYLES["head"]}">{value}'
            f'</th><th style="{FACT_ROW_STYLES["head"]}">{where}</th></tr>')
    body = []
    for row in rows:
        kind = "sent" if row.sent_clash else ("caught" if row.clashed else "plain")
        cell = FACT_ROW_STYLES["cell"]
        body.append(
            f'<tr class="cg-fact cg-fact-{kind}" data-relation="{html.escape(str(row.fact.relation), quote=True)}" '
            f'title="{html.escape(row.said, quote=True)}" style="{FACT_ROW_STYLES[kind]}">'
            f'<td class="cg-fact-about" style="{cell};white-space:nowrap">{html.escape(row.about)}</td>'
            f'<td class="cg-fact-value" style="{cell}"><b>{html.escape(row.value)}</b>{_chips(row)}</td>'
            f'<td class="cg-fact-where" style="{cell};color:#555">{html.escape(row.where(plain))}'
            f"</td></tr>")
    return (f'<div class="cg-fact-sheet-wrap" style="max-width:100%;overflow-x:auto">'
            f'<table class="cg-fact-sheet" style="{FACT_ROW_STYLES["table"]}"><thead>{head}</thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def sheet_summary(rows: Sequence[SheetRow]) -> str:
    """One line under the heading: "5 facts · 3 clashes in replies that were sent · 13 in candidates not sent",
    each clash counted once (its mark on the fact it clashed with and the one on the reply's own fact are one)."""
    n = len(rows)
    line = f"{n} fact{'s' if n != 1 else ''}"
    sent = {m.clash for r in rows for m in r.marks if m.sent}
    caught = {m.clash for r in rows for m in r.marks if not m.sent}
    if sent:
        line += f" · {len(sent)} clash{'es' if len(sent) != 1 else ''} in replies that were sent"
    if caught:
        line += f" · {len(caught)} in candidates not sent"
    return line
