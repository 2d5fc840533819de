"""How the app's highlights and badges look: inline styles (``st.html`` keeps style attributes) and the
presentation mode's stylesheet. Presentation only; ``ui.render`` draws with them.
"""

from __future__ import annotations

# Inline styles (st.html keeps style attributes) plus class names the browser tests look for.
STYLES = {
    "evidence": "background:#ffd6d6;border-bottom:2px solid #d33;padding:0 2px;border-radius:3px;",
    "clause": "background:#ffe9a8;border-bottom:2px solid #c90;padding:0 2px;border-radius:3px;",
    "intra": "background:#e5d4ff;border-bottom:2px solid #73c;padding:0 2px;border-radius:3px;",
    # a sentence the repair mode cut from a candidate before sending the rest
    "removed": "background:#eeeeee;color:#555;text-decoration:line-through;padding:0 2px;border-radius:3px;",
    # a flag under the red badge's band (guard.config.BadgeBand): a possible contradiction, drawn quieter
    "possible": "background:#fff6e0;border-bottom:2px dashed #b80;padding:0 2px;border-radius:3px;",
}
#: the quieter badge of a possible contradiction (a flag between τ and the red badge's band)
POSSIBLE_BADGE_STYLE = (
    "display:inline-block;max-width:100%;white-space:normal;overflow-wrap:anywhere;vertical-align:baseline;"
    "font-size:0.8em;line-height:1.35;color:#6b4a00;background:#fffaf0;border:1px dashed #b80;border-radius:8px;"
    "padding:0 6px;margin:1px 0 1px 4px;"
)
# Badges wrap like words (a long label breaks inside the chat column instead of running past it).
BADGE_STYLE = (
    "display:inline-block;max-width:100%;white-space:normal;overflow-wrap:anywhere;vertical-align:baseline;"
    "font-size:0.8em;line-height:1.35;color:#8a0000;background:#fff0f0;border:1px solid #d77;border-radius:8px;"
    "padding:0 6px;margin:1px 0 1px 4px;"
)
TURN_LABEL_STYLE = "font-size:0.8em;color:#555;margin-bottom:-2px"
#: The bot's fact sheet (ui.fact_sheet): a compact table in rem (presentation mode enlarges it), a row a reply that was
#: sent contradicts in the evidence red, one only an unsent candidate contradicted in the clause amber.
FACT_ROW_STYLES = {
    "table": ("width:auto;min-width:60%;border-collapse:collapse;font-size:0.9rem;line-height:1.35;"
              "margin:0.1rem 0 0.4rem"),
    "head": ("text-align:left;font-weight:600;font-size:0.8em;color:#555;padding:2px 8px;"
             "border-bottom:1px solid #ccc"),
    "cell": "vertical-align:top;padding:3px 24px 3px 8px;border-bottom:1px solid #eee;overflow-wrap:anywhere",
    "plain": "",
    "sent": "background:#ffe3e3;border-left:4px solid #d33",
    "caught": "background:#fff4d6;border-left:4px solid #c90",
}
#: a clash on a fact: a reply that was sent (the badge red), a candidate the guard kept out (amber)
FACT_CLASH_STYLE = BADGE_STYLE
FACT_CAUGHT_STYLE = (
    "display:inline-block;max-width:100%;white-space:normal;overflow-wrap:anywhere;vertical-align:baseline;"
    "font-size:0.8em;line-height:1.35;color:#6b4a00;background:#fffaf0;border:1px solid #c90;border-radius:8px;"
    "padding:0 6px;margin:1px 0 1px 6px;"
)
#: Presentation mode (a projector in a lit room): the whole app's type scaled up (Streamlit sizes
#: text in rem), highlights and badges in strong colours with black or white text. A table's text cells may
#: shrink to 4em (from 8em): at 22 px type in a narrow column (the Learn page's two examples side by side with
#: the sidebar open) the text wraps more and the score columns keep their place inside the table's box.
PRESENTATION_FONT_PX = 22
PRESENTATION_CSS = f"""<style>
html {{ font-size: {PRESENTATION_FONT_PX}px; }}
.cg-turn, .cg-context {{ font-size: 1.2rem !important; }}
.cg-badge {{ color: #ffffff !important; background: #8a0000 !important; border-color: #8a0000 !important;
  font-weight: 600; font-size: 0.85em !important; }}
mark.cg-evidence {{ background: #ffb8b8 !important; color: #000000; border-bottom: 3px solid #a00000 !important; }}
mark.cg-clause {{ background: #ffd23f !important; color: #000000; border-bottom: 3px solid #7a5200 !important; }}
mark.cg-removed {{ background: #d9d9d9 !important; color: #000000; }}
mark.cg-possible {{ background: #ffe9b0 !important; color: #000000; border-bottom: 3px dashed #7a5200 !important; }}
.cg-badge-possible {{ color: #000000 !important; background: #ffe9b0 !important; border-color: #7a5200 !important; }}
mark.cg-intra {{ background: #d9c2ff !important; color: #000000; border-bottom: 3px solid #4b1fa0 !important; }}
.cg-turn-label {{ color: #111111 !important; font-weight: 600; font-size: 0.85em !important; }}
[data-testid="stCaptionContainer"] {{ color: #333333 !important; }}
.cg-table {{ font-size: 1rem !important; }}
.cg-fact-sheet {{ font-size: 1.1rem !important; }}
.cg-fact-sheet th, .cg-fact-where {{ color: #111111 !important; }}
.cg-fact-mark-sent {{ color: #ffffff !important; background: #8a0000 !important; border-color: #8a0000 !important;
  font-weight: 600; }}
.cg-fact-mark-caught {{ color: #000000 !important; background: #ffd23f !important; border-color: #7a5200 !important;
  font-weight: 600; }}
tr.cg-fact-sent {{ background: #ffb8b8 !important; border-left-color: #a00000 !important; }}
tr.cg-fact-caught {{ background: #ffe9b0 !important; border-left-color: #7a5200 !important; }}
.cg-table td[style*="min-width"] {{ min-width: 4em !important; }}
.cg-table th {{ color: #111111 !important; border-bottom-color: #555555 !important; }}
</style>"""
