"""The app's two charts as Altair specifications, built without Streamlit (pages pass them to st.altair_chart).

* ``pair_heatmap``: every scored pair of one verdict — rows are the judged turn's sentences, columns
  the earlier utterances they were compared with — coloured by P(contradiction), with the threshold
  τ as a break in the colour scale and an outline on the cells at or over it (the evidence).
* ``turn_score_chart``: per bot turn of a chat, the sent reply and the most contradicting candidate that was not
  sent, each at the score of the check that decided it, against the τ each turn was judged at (one rule, or a dash
  per turn when they differ) and, where another check decided, that check's own line beside the point; after a
  re-judge, a ring on the candidate the guard would now send where that is not the sent reply.

Both render as SVG (a few hundred marks at most), so their cells, points and legends are elements of
the page a browser test can find.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from guard.judge.wording import score_and_threshold

#: Vega-Lite's renderer: SVG keeps each mark a DOM element (Streamlit picks canvas only for big data).
SVG = {"embedOptions": {"renderer": "svg"}}
#: Colours below τ stay pale; from τ on they turn red, so the colour legend shows the break at τ.
BELOW_TAU, AT_TAU, CERTAIN = "#f2f2f2", "#f7a35c", "#9e0000"
SENT, NOT_SENT = "sent reply", "most contradicting draft not sent"
#: After a re-judge: the candidate the guard would now send, where that is not the sent reply (a ringed point).
WOULD_SEND = "re-judged: would now send"
TURN_CHART_HEIGHT = 320  # px; Streamlit needs it passed to st.altair_chart as well
ROW_HEIGHT = 52  # px per judged sentence: room for the score in each cell and a three-line heading


def wrap_label(text: str, width: int, lines: int) -> str:
    """``text`` broken at spaces into at most ``lines`` lines of about ``width`` characters ("\n" between them;
    the heatmap's text marks break there), the last one ending in "…" when the text goes on."""
    words, out, line = " ".join(str(text).split()).split(" "), [], ""
    for word in words:
        while len(word) > width:  # a word longer than a line is split
            if line:
                out.append(line)
                line = ""
            out.append(word[:width])
            word = word[width:]
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            out.append(line)
            line = word
    if line:
        out.append(line)
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: width - 1].rstrip() + "…"
    return "\n".join(out)


#: Column headings: lines of this many characters (five columns fit side by side in the playground's
#: half of a 1400 px window); row headings: the judged sentence on up to three lines. At a larger ``scale`` a line
#: holds fewer characters (and a column heading gets a line more), so a heading keeps its width as its type grows
#: and neighbouring headings never run into each other.
COLUMN_LABEL_CHARS, COLUMN_LABEL_LINES = 16, 3
ROW_LABEL_CHARS, ROW_LABEL_LINES = 30, 3
LABEL_FONT = 12
LABEL_LINE_HEIGHT = 14
#: Chart text in px at scale 1: axis, legend and subtitle text (SMALL_FONT), titles, the τ label and the scores in the
#: cells (LARGE_FONT). Presentation mode's scale (1.5) makes the smallest 18 px, near the page's 22 px type; Vega's
#: own 11 px would stay tiny on a projector.
SMALL_FONT, LARGE_FONT = 12, 13


def font_px(base: int, scale: float) -> int:
    """A chart font size at ``scale`` (presentation mode's larger type), rounded half up: 12 x 1.5 is 18."""
    return int(base * scale + 0.5)


def heading_lines(scale: float) -> tuple[int, int, int]:
    """Characters a line of a column heading, its lines, and characters a line of a row heading at ``scale``."""
    if scale <= 1:
        return COLUMN_LABEL_CHARS, COLUMN_LABEL_LINES, ROW_LABEL_CHARS
    return (max(8, round(COLUMN_LABEL_CHARS / scale)), COLUMN_LABEL_LINES + 1,
            max(12, round(ROW_LABEL_CHARS / scale)))


def pair_heatmap(frame: pd.DataFrame, threshold: float, title: str = "", scale: float = 1.0) -> alt.LayerChart:
    """Heatmap of a ``ui.tables.pair_score_frame`` (judged sentences × earlier utterances).

    Every column and row has a heading (text marks rather than axis labels, which Vega drops when they
    overlap and cuts at a fixed width): the earlier utterance abbreviated on up to three lines above its
    column, the judged sentence on up to three lines left of its row; hovering a heading shows the full text.
    ``scale``: every size times this (presentation mode's larger type).
    """
    font, line, row_height = font_px(LABEL_FONT, scale), font_px(LABEL_LINE_HEIGHT, scale), round(ROW_HEIGHT * scale)
    column_chars, column_lines, row_chars = heading_lines(scale)
    frame = frame.assign(dark=frame["score"] >= (threshold + 1) / 2,  # white numbers on the darkest cells
                         # each cell's score to the digits it needs to compare with τ as the real numbers do
                         shown=[score_and_threshold(v, threshold)[0] for v in frame["score"]])
    tau = f"{threshold:.4g}"  # as the sidebar writes it (0.9493, not 0.95)
    order = frame.sort_values("order")["earlier"].drop_duplicates().tolist()
    rows = frame.drop_duplicates("candidate")["candidate"].tolist()
    x = alt.X("earlier:N", sort=order, title=None, axis=alt.Axis(labels=False, ticks=False, domain=False))
    y = alt.Y("candidate:N", sort=rows, title=None, axis=alt.Axis(labels=False, ticks=False, domain=False))
    base = alt.Chart(frame).encode(x=x, y=y)
    tooltip = [alt.Tooltip("where:N", title="compared with"), alt.Tooltip("earlier_text:N", title="earlier text"),
               alt.Tooltip("judged:N", title="judged sentence"), alt.Tooltip("score:Q", title="P(contradiction)",
                                                                             format=".3f")]
    ticks = [0.0, 0.5, float(threshold), 1.0]
    ticks = [t for t in ticks if t == threshold or abs(t - threshold) >= 0.1]  # no overlapping labels
    cells = base.mark_rect(strokeWidth=3).encode(
        color=alt.Color("score:Q", title=f"P(contradiction) · τ = {tau}",
                        scale=alt.Scale(domain=[0, threshold, 1], range=[BELOW_TAU, AT_TAU, CERTAIN]),
                        legend=alt.Legend(orient="bottom", gradientLength=round(300 * scale), values=ticks,
                                          format=".4~g", titleLimit=0, labelFontSize=font_px(SMALL_FONT, scale),
                                          titleFontSize=font_px(SMALL_FONT, scale))),
        stroke=alt.condition(f"datum.score >= {threshold}", alt.value("#000000"), alt.value("#ffffff")),
        tooltip=tooltip,
    )
    labels = base.mark_text(baseline="middle", fontSize=font_px(LARGE_FONT, scale)).encode(
        text=alt.Text("shown:N"),
        color=alt.condition("datum.dark", alt.value("white"), alt.value("black")),
        tooltip=tooltip,
    )
    columns = frame.drop_duplicates("earlier").assign(full=lambda f: [f"{w}: {t}" for w, t in zip(f["where"],
                                                                                               f["earlier_text"])])
    # every heading padded to the same number of lines from the top, so its last line sits just above the cells
    # (Vega stacks a multi-line text downwards from its baseline)
    columns["heading"] = ["\n" * (column_lines - 1 - w.count("\n")) + w for w in
                          (wrap_label(t, column_chars, column_lines) for t in columns["full"])]
    column_heads = alt.Chart(columns).mark_text(
        baseline="bottom", align="center", dy=-6 - line * (column_lines - 1), lineBreak="\n",
        lineHeight=line, fontSize=font, color="#222").encode(
        x=x, y=alt.value(0), text="heading:N", tooltip=[alt.Tooltip("full:N", title="earlier utterance")])
    # a row heading's lines centred on its row: its first line one line up, a one-line heading after a blank line
    row_frame = frame.drop_duplicates("candidate").assign(
        heading=lambda f: [("\n" + w if "\n" not in w else w) for w in
                           (wrap_label(t, row_chars, ROW_LABEL_LINES) for t in f["judged"])])
    row_heads = alt.Chart(row_frame).mark_text(
        baseline="middle", align="right", dx=-8, dy=-line, lineBreak="\n", lineHeight=line, fontSize=font,
        color="#222").encode(
        y=y, x=alt.value(0), text="heading:N", tooltip=[alt.Tooltip("judged:N", title="judged sentence")])
    return alt.layer(cells, labels, column_heads, row_heads).properties(
        height=alt.Step(row_height), usermeta=SVG,
        title=alt.TitleParams(title, anchor="start", offset=12 + (line + 1) * column_lines,
                              fontSize=font_px(LARGE_FONT, scale), subtitleFontSize=font_px(SMALL_FONT, scale),
                              subtitle=f"outlined: at or over τ = {tau}, the evidence; hover a cell or a "
                                       "heading for the full sentences"))


def turn_score_chart(rows: Sequence[dict], threshold: float, scale: float = 1.0) -> alt.LayerChart:
    """Line chart of ``ui.transcript.turn_scores`` rows (turn, series, score, text, tau, line, ...) with τ drawn as each
    turn was judged at it: one dashed rule when every turn had the same τ, else a dash over each turn at its own τ,
    labelled where it changes. Each point is the score of the check that decided its reply; where that check has a
    line of its own (inside the reply, who is who), a short dash of the point's colour marks that line beside it, so
    a point is a contradiction when it reaches its own line, whatever the sidebar says now. ``threshold`` (today's τ)
    stands in for rows that carry no τ."""
    columns = ["turn", "series", "score", "text", "tau", "line", "score_text", "line_text", "check"]
    frame = pd.DataFrame(list(rows), columns=columns).dropna(subset=["score"])
    frame["tau"] = frame["tau"].astype(float).fillna(float(threshold))
    frame["line"] = frame["line"].astype(float).fillna(frame["tau"])
    for name, number in (("score_text", "score"), ("line_text", "line")):  # rows written before these fields
        frame[name] = [t if isinstance(t, str) and t else f"{v:.4g}" for t, v in zip(frame[name], frame[number])]
    frame["check"] = frame["check"].fillna("")
    axis = {"labelFontSize": font_px(SMALL_FONT, scale), "titleFontSize": font_px(SMALL_FONT, scale)}
    x = alt.X("turn:O", title="bot turn", axis=alt.Axis(labelAngle=0, **axis))
    y = alt.Y("score:Q", title="contradiction score", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(**axis))
    shown = [s for s in (SENT, NOT_SENT, WOULD_SEND) if s in set(frame["series"])] or [SENT, NOT_SENT]
    palette = {SENT: "#1f5fbf", NOT_SENT: "#e07b00", WOULD_SEND: "#138a36"}
    colour = alt.Color("series:N", title=None, scale=alt.Scale(domain=shown, range=[palette[s] for s in shown]),
                       legend=alt.Legend(orient="bottom", labelLimit=0, labelFontSize=font_px(SMALL_FONT, scale),
                                         symbolSize=round(100 * scale)))
    tooltip = [alt.Tooltip("turn:O", title="turn"), alt.Tooltip("series:N", title="which"),
               alt.Tooltip("score_text:N", title="contradiction score"), alt.Tooltip("check:N", title="decided by"),
               alt.Tooltip("line_text:N", title="its line"), alt.Tooltip("text:N", title="text")]
    lines = alt.Chart(frame[frame["series"] != WOULD_SEND]).mark_line(
        point=alt.OverlayMarkDef(size=round(80 * scale * scale), filled=True)).encode(x=x, y=y, color=colour, tooltip=tooltip)
    # a re-judge's pick is a ring around its candidate's point (it may sit on the orange one), no line
    picks = alt.Chart(frame[frame["series"] == WOULD_SEND]).mark_point(
        shape="diamond", size=round(320 * scale * scale), filled=False, strokeWidth=3).encode(x=x, y=y, color=colour, tooltip=tooltip)
    # a point decided by a check with a line of its own: that line, a short dash in the point's colour
    own = frame[(frame["line"] - frame["tau"]).abs() > 1e-9]
    own_lines = alt.Chart(own).mark_tick(thickness=2, size=round(OWN_LINE_PX * scale), opacity=0.9).encode(
        x=x, y=alt.Y("line:Q", scale=alt.Scale(domain=[0, 1])), color=colour,
        tooltip=[alt.Tooltip("turn:O", title="turn"), alt.Tooltip("check:N", title="decided by"),
                 alt.Tooltip("line_text:N", title="its line")])
    taus = frame.sort_values("turn").drop_duplicates("turn")[["turn", "tau"]].reset_index(drop=True)
    taus["label"] = [f"τ = {t:.4g}" for t in taus["tau"]]  # 0.9493, not 0.95
    label_font = font_px(LARGE_FONT, scale)
    if taus["tau"].nunique() <= 1:  # one τ judged every turn: a dashed rule across the chart
        rule_frame = taus.head(1) if len(taus) else pd.DataFrame({"tau": [float(threshold)],
                                                                  "label": [f"τ = {threshold:.4g}"]})
        rule = alt.Chart(rule_frame).mark_rule(strokeDash=[6, 4], color=TAU_COLOUR, strokeWidth=2).encode(y="tau:Q")
        # under the rule, on a white halo: the dashes never cross the words, and the chart's top cannot clip them
        text = {"align": "left", "baseline": "top", "dx": 4, "dy": 5, "fontSize": label_font}
        label = alt.layer(
            alt.Chart(rule_frame).mark_text(color="white", stroke="white", strokeWidth=5, **text).encode(
                y="tau:Q", text="label:N", x=alt.value(0)),
            alt.Chart(rule_frame).mark_text(color=TAU_COLOUR, fontWeight="bold", **text).encode(
                y="tau:Q", text="label:N", x=alt.value(0)))
    else:  # turns judged at different τ (another detector or threshold since): each turn's own, labelled on change
        rule = alt.Chart(taus).mark_tick(color=TAU_COLOUR, thickness=3, size=round(TAU_TICK_PX * scale)).encode(
            x=x, y="tau:Q",
            tooltip=[alt.Tooltip("turn:O", title="turn"), alt.Tooltip("tau:Q", format=".4g", title="judged at τ")])
        changed = taus[taus["tau"].ne(taus["tau"].shift())]
        text = {"align": "left", "baseline": "middle", "dx": round((TAU_TICK_PX / 2 + 4) * scale),
                "fontSize": label_font}
        label = alt.layer(
            alt.Chart(changed).mark_text(color="white", stroke="white", strokeWidth=5, **text).encode(
                x=x, y="tau:Q", text="label:N"),
            alt.Chart(changed).mark_text(color=TAU_COLOUR, fontWeight="bold", **text).encode(
                x=x, y="tau:Q", text="label:N"))
    return alt.layer(lines, picks, rule, label, own_lines).properties(height=round(TURN_CHART_HEIGHT * scale),
                                                                      usermeta=SVG)


#: τ's colour, the length of the dash over each turn when the turns were judged at different τ, and of the dash at a
#: point's own line (a check other than the one against earlier turns decided it)
TAU_COLOUR = "#b00000"
TAU_TICK_PX = 40
OWN_LINE_PX = 22


def judged_taus(rows: Sequence[dict]) -> list[float]:
    """The distinct τ the chart's turns were judged at, in turn order."""
    return list(dict.fromkeys(float(r["tau"]) for r in sorted(rows, key=lambda r: r["turn"])
                              if r.get("tau") is not None))
