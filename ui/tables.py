"""The tables the pages show, as plain data: a small table as wrapping HTML and the pair-score heatmap's frame.

Every cell passes through ``html.escape``; no Streamlit import, so these are unit-tested on their own
(``ui.widgets.show_table`` and ``ui.charts.pair_heatmap`` draw them).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import pandas as pd

from guard.judge.verdicts import PairScore
from guard.vocabulary import PremiseSource, describe_source
from ui.render import escape_text

#: A small table as HTML (ui.widgets.show_table): long text wraps inside its cell, numbers never do, and
#: the type is in rem, so presentation mode's larger root size enlarges it like the rest of the page.
TABLE_STYLE = "width:100%;border-collapse:collapse;font-size:0.85rem;line-height:1.4;margin:0.25rem 0 0.75rem"
TABLE_HEAD_STYLE = ("text-align:left;vertical-align:bottom;font-weight:600;padding:4px 8px;"
                    "border-bottom:2px solid #ccc;color:#333")
TABLE_CELL_STYLE = "vertical-align:top;padding:4px 8px;border-bottom:1px solid #e6e6e6"
TEXT_CELL_STYLE = "white-space:normal;overflow-wrap:anywhere;min-width:8em"
NUMBER_CELL_STYLE = "white-space:nowrap;text-align:right;font-variant-numeric:tabular-nums;width:1%"


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def table_html(rows: Sequence[dict], columns: Sequence[str] | None = None, css_class: str = "",
               pinned: Sequence[float] = ()) -> str:
    """``rows`` (dicts of plain values) as an escaped HTML table (class ``cg-table``): text columns wrap,
    number columns keep one line and stay whole, so no column is cut at any width. None shows as empty.

    A table wider than its box scrolls sideways inside it; ``pinned``: the widths (em) of the leading columns that
    stay in view meanwhile (``position: sticky``, class ``cg-pinned``), so each row keeps its name."""
    columns = list(columns) if columns is not None else list(dict.fromkeys(k for r in rows for k in r))
    numeric = {c for c in columns if any(_is_number(r.get(c)) for r in rows)
               and all(r.get(c) is None or _is_number(r.get(c)) for r in rows)}
    lefts = [sum(pinned[:k]) for k in range(len(pinned))]

    def pin(k: int) -> tuple[str, str]:
        if k >= len(pinned):
            return "", ""
        return (' class="cg-pinned"', f";position:sticky;left:{lefts[k]:g}em;z-index:1;background:#ffffff;"
                f"box-sizing:border-box;width:{pinned[k]:g}em;min-width:{pinned[k]:g}em;max-width:{pinned[k]:g}em")

    head = "".join(f'<th{pin(k)[0]} style="{TABLE_HEAD_STYLE}{";text-align:right" if c in numeric else ""}'
                   f'{pin(k)[1]}" data-column="{html.escape(str(c), quote=True)}">{html.escape(str(c))}</th>'
                   for k, c in enumerate(columns))
    body = []
    for row in rows:
        cells = []
        for k, c in enumerate(columns):
            value = row.get(c)
            text = "" if value is None or (isinstance(value, float) and value != value) else str(value)
            style = NUMBER_CELL_STYLE if c in numeric else (TEXT_CELL_STYLE if len(text) > 12 else "")
            if k < len(pinned):
                style = TEXT_CELL_STYLE.replace("min-width:8em", "") + pin(k)[1]
            cells.append(f'<td{pin(k)[0]} style="{TABLE_CELL_STYLE};{style}">{escape_text(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    classes = " ".join(["cg-table", css_class]).strip()
    return (f'<div class="cg-table-wrap" style="max-width:100%;overflow-x:auto">'
            f'<table class="{classes}" style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


# ---------------------------------------------------------------- pair-score heatmap

def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: The order of premises along the heatmap's axis: persona lines, then turns, then anything else.
_SOURCE_ORDER = (PremiseSource.PERSONA, PremiseSource.HISTORY, PremiseSource.INTRA, PremiseSource.WHOLE_HISTORY)


def _premise_key(pair: PairScore) -> tuple[int, int]:
    return _SOURCE_ORDER.index(PremiseSource(pair.source)), (-1 if pair.turn_id is None else int(pair.turn_id))


def pair_score_frame(pair_scores: Sequence[PairScore]) -> pd.DataFrame:
    """Long-format frame (one row per scored pair) for the heatmap.

    Columns: ``candidate`` (the candidate sentence/clause, shortened for an axis label), ``earlier``
    (where it comes from and the earlier sentence, shortened), ``source`` (guard.vocabulary.PremiseSource),
    ``order`` (the earlier text's place on the axis: persona lines first, then turns in order), the full
    texts for tooltips (``judged``, ``earlier_text``, ``where``) and ``score``. Duplicate cells keep
    their maximum, as the detector does.
    """
    ranks = {key: rank for rank, key in enumerate(sorted({_premise_key(p) for p in pair_scores}))}
    rows = []
    for pair in pair_scores:
        where = describe_source(pair)
        rows.append({
            "candidate": _short(pair.hypothesis, 80),
            "earlier": f"{where}: {_short(pair.premise, 40)}",
            "source": PremiseSource(pair.source).value,
            "order": ranks[_premise_key(pair)],
            "judged": pair.hypothesis,
            "earlier_text": pair.premise,
            "where": where,
            "score": float(pair.score),
        })
    keys = ["candidate", "earlier", "source", "order", "judged", "earlier_text", "where"]
    frame = pd.DataFrame(rows, columns=keys + ["score"])
    if frame.empty:
        return frame
    return frame.groupby(keys, as_index=False, sort=False)["score"].max()


def pair_score_matrix(pair_scores: Sequence[PairScore]) -> pd.DataFrame:
    """Candidate sentences (rows) x earlier utterances (columns) matrix of contradiction scores."""
    frame = pair_score_frame(pair_scores)
    if frame.empty:
        return pd.DataFrame()
    order = frame.sort_values("order")["earlier"].drop_duplicates().tolist()
    matrix = frame.pivot_table(index="candidate", columns="earlier", values="score", aggfunc="max", sort=False)
    return matrix.reindex(columns=order)


