"""Reports as older versions wrote them, read in today's shape: the one place that knows the JSON form's history.

``guard.judge.report.BotTurnReport.from_json`` reads every report through ``upgrade_report_json``; the studio's
database migrations (``studio.storage.migrations``) rewrite stored rows with it once.
"""

from __future__ import annotations

from guard.config import DEFAULT_PREFILTER_K, FALLBACK_THRESHOLD

#: the verdict fields a report's candidates carried themselves before they embedded the verdict
_COPIED_VERDICT_FIELDS = ("contradiction_score", "contradicts", "category", "evidence", "details")


def upgrade_report_json(data: dict) -> dict:
    """A report's JSON form in today's shape. Older reports copied the verdict into each candidate field by field (``contradiction_score``, ``contradicts``, ``category``, ``evidence``, ``details``);
    today a candidate embeds the verdict. Idempotent: today's shape passes through unchanged."""
    if not isinstance(data, dict):
        return data
    if "settings" not in data:  # written before the report quoted its settings: its mode, τ and prefilter
        data = {**data, "settings": {"mode": data.get("mode") or "off",
                                     "threshold": data.get("threshold") or FALLBACK_THRESHOLD,
                                     "prefilter_k": DEFAULT_PREFILTER_K if data.get("prefilter") else None},
                "prefilter_recorded": data.get("prefilter") is not None}
    candidates = []
    for cand in data.get("candidates") or []:
        if not isinstance(cand, dict) or "verdict" in cand or not any(k in cand for k in _COPIED_VERDICT_FIELDS):
            candidates.append(cand)
            continue
        kept = {k: v for k, v in cand.items() if k not in _COPIED_VERDICT_FIELDS}
        score = cand.get("contradiction_score")
        if score is None:  # the guard was off: no verdict
            candidates.append({**kept, "verdict": None})
            continue
        details = cand.get("details") or {"method": "structured", "turn_id": -1, "threshold": data.get("threshold"),
                                          "n_pairs": 0, "history_score": score}
        candidates.append({**kept, "verdict": {
            "contradiction": bool(cand.get("contradicts")), "score": score, "category": cand.get("category") or "none",
            "evidence": cand.get("evidence") or [], "pair_scores": [], "details": details}})
    return {**data, "candidates": candidates} if "candidates" in data else dict(data)
