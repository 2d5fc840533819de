"""How often the repair mode keeps an answer, and how often it falls back, on the scripted demo's contradictions.

The probe set is built here from the scripted demo (bots/scripted.py): the bot said "Hi! I'm Sam. I have two dogs,
Max and Bella." and "I walk Max and Bella in the park every morning before work.", the user asks "Would you like
another pet?", and the bot's best candidate carries one of ``CONTRADICTIONS`` of those facts in one of ``SHAPES``
(alone, before or after a statement, before a question or small talk, next to a second contradiction, as a clause of
a longer sentence). Each probe goes through the chat's own path (``conversation.guarding.guarded_reply``: the
scripted bot, the shipped detector at its calibrated τ with the chat's prefilter, mode repair, falling back to
re-rank) with the demo's consistent candidate beside it. Every probe is counted as: not flagged (the detector missed
the contradiction), repaired (and whether the sentence removed is the planted one, and whether the detector still
flags what was sent), or fallen back (and why).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_repair --json benchmarks/results/repair-probes.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks.machine import machine_info, write_json

DEMO_USER = ("Hi! Tell me about yourself.", "What do you do in the mornings?", "Would you like another pet?")
DEMO_BOT = ("Hi! I'm Sam. I have two dogs, Max and Bella.", "I walk Max and Bella in the park every morning before work.")
CONSISTENT = "No, my two dogs are plenty for me."
#: Statements that contradict what the demo's bot said (two dogs, named Max and Bella, walked every morning before
#: work, Sam).
CONTRADICTIONS = (
    "I don't have any pets.",
    "I have never had a dog.",
    "I don't have a dog.",
    "I have no dogs.",
    "I only have one dog.",
    "I have three cats and no dogs.",
    "I never go to the park.",
    "I don't have a job.",
    "My name is Alex.",
    "I sleep until noon every day.",
)
#: How the contradiction sits in the reply ({c}: the contradiction, {c2}: another one, {clause}: it lower-cased as a
#: clause) and what a repair should do with it: "repair" (the rest answers) or "fall back".
SHAPES = {
    "alone": ("{c}", "fall back"),
    "then a statement": ("{c} I love hiking on weekends though.", "repair"),
    "after a statement": ("Maybe a cat one day! {c}", "repair"),
    "then a question": ("{c} Do you have any pets?", "fall back"),
    "then small talk": ("{c} Haha!", "fall back"),
    "two contradictions": ("{c} {c2} I love hiking on weekends though.", "fall back"),
    "a clause of a sentence": ("I love animals, but {clause} I like hiking too.", "repair"),
}


def probes() -> list[dict]:
    out = []
    for k, c in enumerate(CONTRADICTIONS):
        c2 = CONTRADICTIONS[(k + 3) % len(CONTRADICTIONS)]
        clause = c[0].lower() + c[1:] if not c.startswith("I ") else c
        for shape, (template, expected) in SHAPES.items():
            out.append({"contradiction": c, "shape": shape, "expected": expected,
                        "reply": template.format(c=c, c2=c2, clause=clause)})
    return out


def _declined_kind(why: str) -> str:
    for key, kind in (("whole reply", "the contradicting sentence is the whole reply"),
                      ("only asks or greets", "only a question or small talk would remain"),
                      ("runs through", "more than one sentence contradicts"),
                      ("not a sentence", "evidence not found in the reply"),
                      ("no evidence", "no evidence"), ("unstructured", "unstructured detector")):
        if key in why:
            return kind
    return why


def run(args: argparse.Namespace) -> dict:
    from bots.scripted import ScriptedBot
    from conversation.guarding import guarded_reply, resolved_settings
    from conversation.records import USER, ChatSettings, Conversation
    from guard.judge.pipeline import load_guard
    from guard.vocabulary import GuardMode

    guard = load_guard(args.detector, prefilter=args.prefilter)
    settings = ChatSettings(bot="scripted", preset="greedy", guard_mode=GuardMode.REPAIR, detector=args.detector,
                            threshold=guard.threshold, num_candidates=2, prefilter=args.prefilter)
    judged_with = resolved_settings(guard, settings)  # what guarded_reply judges with (its τ, its prefilter k)
    rows, started = [], time.perf_counter()
    for probe in probes():
        script = {"replies": [[DEMO_BOT[0]], [DEMO_BOT[1]],
                              [{"text": probe["reply"], "score": -0.3}, {"text": CONSISTENT, "score": -0.7}]]}
        bot, conversation = ScriptedBot(script), Conversation()
        for message in DEMO_USER:
            conversation.add(USER, message)
            turn = conversation.append(guarded_reply(conversation, bot, guard, settings))
        report, best = turn.report, turn.report.candidates[0]
        row = {**probe, "flagged": best.contradicts, "score": round(best.contradiction_score, 4),
               "category": best.category, "sent": turn.text, "repaired": report.repaired}
        if report.repaired:
            row["removed"] = report.repair.removed
            row["removed_planted"] = probe["contradiction"] in report.repair.removed \
                or probe["contradiction"][2:] in report.repair.removed
            again = guard.verdict(conversation.history(before=turn.turn_id), turn.text, speaker="bot",
                                  settings=judged_with)
            row["sent_still_flagged"] = bool(again.contradiction)
        elif best.contradicts:
            row["declined"] = report.repair_declined
            row["declined_kind"] = _declined_kind(report.repair_declined)
            row["sent_candidate"] = report.chosen_index
        rows.append(row)
    seconds = time.perf_counter() - started
    by_shape = {}
    for shape, (_, expected) in SHAPES.items():
        mine = [r for r in rows if r["shape"] == shape]
        flagged = [r for r in mine if r["flagged"]]
        repaired = [r for r in flagged if r["repaired"]]
        by_shape[shape] = {
            "expected": expected, "probes": len(mine), "flagged": len(flagged), "repaired": len(repaired),
            "fell_back": len(flagged) - len(repaired),
            "repaired_planted_sentence": sum(r["removed_planted"] for r in repaired),
            "sent_still_flagged": sum(r["sent_still_flagged"] for r in repaired),
            "why_fell_back": dict(Counter(r["declined_kind"] for r in flagged if not r["repaired"])),
        }
    flagged = [r for r in rows if r["flagged"]]
    totals = {"probes": len(rows), "flagged": len(flagged), "repaired": sum(r["repaired"] for r in flagged),
              "fell_back": sum(not r["repaired"] for r in flagged),
              "as_expected": sum((r["repaired"] and r["expected"] == "repair")
                                 or (not r["repaired"] and r["expected"] == "fall back") for r in flagged)}
    return {"benchmark": "bench_repair", "detector": args.detector, "threshold": judged_with.threshold,
            "prefilter_k": judged_with.prefilter_k, "seconds": round(seconds, 1), "machine": machine_info(),
            "totals": totals, "by_shape": by_shape, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--detector", default="embedded")
    parser.add_argument("--no-prefilter", dest="prefilter", action="store_false",
                        help="pair each reply sentence with every earlier one (default: the chat page's prefilter, "
                             "the detector's prefilter k)")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args(argv)
    result = run(args)
    print(json.dumps({k: v for k, v in result.items() if k not in ("rows", "machine")}, indent=2))
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
