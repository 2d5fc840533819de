"""Remind, don't mute: ways of asking a small bot again, measured on a goading script.

    # the goading script (22 turns of CDConv triggers, nurse persona) with each way of reminding, seeded
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_reminders script --bots embedded gemma3 --seeds 1 2 3 \\
        --json benchmarks/results/reminders/script.json
    # "Wait, aren't you a teacher?" after the bot said it works as a nurse, five seeds, every reply written out for
    # a person to read (the app's code path; --served: the same through the guard server over HTTP)
    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_reminders teacher --seeds 1 2 3 4 5 \\
        --json benchmarks/results/reminders/teacher.json

Every turn goes through the app's own path (``conversation.guarding.guarded_reply``, re-rank, 4 candidates, the
default preset seeded per run and turn, the shipped detector as the chat builds it). The ways:

* ``none``: no reminder (the policy alone: the best consistent candidate, else the generator's best);
* ``restated``: the fact restated in the bot's persona ("Remember, you said: ..."), as a remote bot gets it;
* ``own-turn``: the fact placed as the bot's own last turn before the user's message;
* ``opening``: the reply opened with the consistent answer, the bot writing on from it (the product's way for
  local bots). Every way but ``none`` ends with the guard's composed reply (the opening alone) when each reminded
  candidate still contradicts.

Reported per bot and way: turns that needed a reminder, reminders after which a consistent reply was sent (by the
bot, or composed by the guard), contradictions sent (replies the guard flagged), and the seconds reminders added.
"Consistent" here is the guard's own opinion; the teacher question's replies are also read by people (two passes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from benchmarks.machine import machine_info, write_json

PERSONA = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]
#: CDConv's trigger methods against the persona: direct and negated questions, leading and declarative
#: questions, role questions, a short reply after the bot asks back, and the same fact asked again later
SCRIPT = (
    "Hi! Tell me about yourself.",
    "What do you do for work?",
    "Wait, aren't you a teacher?",
    "How many dogs do you have?",
    "I thought you had a cat?",
    "Where do you live?",
    "So you live in London?",
    "Do you like your job?",
    "You're a doctor, right?",
    "Are you a doctor?",
    "What are your dogs' names?",
    "Don't you hate dogs?",
    "Have you ever been to Paris?",
    "Do you have any pets?",
    "I'm a nurse too! Where do you work?",
    "ok",
    "What did you say your job was?",
    "You don't have any dogs, do you?",
    "Do you live alone?",
    "So you're not a nurse?",
    "What's your favorite thing about Paris?",
    "Tell me again, what do you do?",
)
WAYS = ("none", "restated", "own-turn", "opening")
TEACHER_TURNS = ("Hi! What do you do?", "I work as a nurse at a hospital here in Paris.", "Wait, aren't you a teacher?")


def reminded_bot(bot, way: str):
    """The bot as the guard would ask it again in ``way`` (a wrapper: the product asks local bots by opening)."""
    from bots.base import Bot
    from guard.records import Turn

    if way in ("none", "opening"):
        return bot

    class Reminded(Bot):
        name = f"{bot.name}+{way}"
        continues_openings = way == "own-turn"

        def generate(self, history, num_candidates, decoding=None, persona=()):
            return bot.generate(history, num_candidates, decoding, persona)

        def continue_reply(self, history, opening, num_candidates, decoding=None, persona=()):
            # own-turn: the fact the opening states becomes the bot's own last turn before the user's message
            fact = opening.split(", ", 1)[1] if opening.startswith(("No, ", "Yes, ", "Actually, ")) else opening
            fact = fact[:1].upper() + fact[1:]
            said = [*history[:-1], Turn(history[-1].turn_id, "bot", fact), history[-1]]
            return bot.generate(said, num_candidates, decoding, persona)

        def prompt_coverage(self, history, persona=()):
            return bot.prompt_coverage(history, persona)

    return Reminded()


def play(bot, guard, way: str, seed: int, script=SCRIPT, persona=PERSONA) -> list[dict]:
    """One run of the script: each turn's sent reply, whether the guard flagged it, and its reminder."""
    from conversation.guarding import guarded_reply
    from conversation.records import ChatSettings, Conversation

    settings = ChatSettings(bot=bot.name, detector=guard.name, threshold=guard.threshold, num_candidates=4,
                            remind=way != "none")
    conversation = Conversation(persona=list(persona))
    asked = reminded_bot(bot, way)
    rows = []
    for number, message in enumerate(script):
        conversation.add("user", message)
        decoding = replace(settings.decoding_config, seed=seed * 100 + number)
        turn = conversation.append(guarded_reply(conversation, asked, guard, replace(settings, decoding=decoding)))
        report = turn.report
        rows.append({"turn": number, "message": message, "reply": turn.text, "flagged": report.reply_flagged,
                     "any_contradiction": report.any_contradiction, "sent_by": str(report.chosen.origin)
                     if report.chosen is not None else "safe reply",
                     "reminder": None if report.reminder is None else {
                         "opening": report.reminder.opening, "method": str(report.reminder.method),
                         "outcome": str(report.reminder.outcome), "seconds": report.reminder.seconds},
                     "generate_s": report.timings.get("generate_s"), "guard_s": report.timings.get("guard_s")})
    return rows


def summarize(rows: list[dict]) -> dict:
    reminders = [r for r in rows if r["reminder"]]
    return {"turns": len(rows), "turns_with_a_contradicting_candidate": sum(r["any_contradiction"] for r in rows),
            "reminders": len(reminders),
            "consistent_after_reminder": sum(r["reminder"]["outcome"] in ("reminded", "composed") for r in reminders),
            "written_by_bot_after_reminder": sum(r["reminder"]["outcome"] == "reminded" for r in reminders),
            "composed_by_guard": sum(r["reminder"]["outcome"] == "composed" for r in reminders),
            "contradictions_sent": sum(r["flagged"] for r in rows),
            "seconds_added": round(sum(r["reminder"]["seconds"] for r in reminders), 2),
            "seconds_per_reminder_median": round(statistics.median(r["reminder"]["seconds"] for r in reminders), 2)
            if reminders else None}


def cmd_script(args) -> int:
    from bots.registry import make_bot
    from guard.judge.pipeline import load_guard

    guard = load_guard(args.detector)
    out = {"machine": machine_info(), "detector": args.detector, "seeds": args.seeds, "runs": []}
    for bot_name in args.bots:
        bot = make_bot(bot_name)
        for way in args.ways:
            rows = [dict(r, seed=seed) for seed in args.seeds for r in play(bot, guard, way, seed)]
            total = summarize(rows)
            out["runs"].append({"bot": bot_name, "way": way, **total, "rows": rows})
            print(f"{bot_name:9} {way:9} " + " ".join(f"{k}={v}" for k, v in total.items()), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, out, indent=2)
    return 0


def cmd_teacher(args) -> int:
    out = {"machine": machine_info(), "detector": args.detector, "bot": args.bot,
           "path": "served" if args.served else "app", "replies": []}
    history = [("user", TEACHER_TURNS[0]), ("bot", TEACHER_TURNS[1])]
    if args.served:
        from harness.server import guard_servers

        with guard_servers(["--bot", args.bot, "--detector", args.detector]) as (url,):
            answers = [served_after(url, history, TEACHER_TURNS[2], seed) for seed in args.seeds]
    else:
        from bots.registry import make_bot
        from guard.judge.pipeline import load_guard

        guard, bot = load_guard(args.detector), make_bot(args.bot)
        answers = [play_after(bot, guard, history, TEACHER_TURNS[2], seed) for seed in args.seeds]
    for seed, rows in zip(args.seeds, answers):
        out["replies"].append({"seed": seed, **rows})
        print(f"seed {seed}: {'FLAGGED ' if rows['flagged'] else ''}[{rows['sent_by']}] {rows['reply']}", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, out, indent=2)
    return 0


def play_after(bot, guard, history, message: str, seed: int, persona=PERSONA) -> dict:
    """One guarded reply to ``message`` after a fixed ``history`` (speaker, text), seeded."""
    from conversation.guarding import guarded_reply
    from conversation.records import ChatSettings, Conversation

    conversation = Conversation(persona=list(persona))
    for speaker, text in history:
        conversation.add(speaker, text)
    conversation.add("user", message)
    settings = ChatSettings(bot=bot.name, detector=guard.name, threshold=guard.threshold, num_candidates=4)
    settings = replace(settings, decoding=replace(settings.decoding_config, seed=seed))
    report = guarded_reply(conversation, bot, guard, settings).report
    return {"reply": report.sent_reply(), "flagged": report.reply_flagged,
            "sides_taken": sum(bool(c.details and c.details.persona_sides) for c in report.candidates),
            "sent_by": str(report.chosen.origin) if report.chosen is not None else "safe reply",
            "candidates": [{"text": c.text, "origin": str(c.origin), "contradicts": c.contradicts,
                            "score": round(c.contradiction_score or 0.0, 4)} for c in report.candidates],
            "reminder": None if report.reminder is None else report.reminder.opening}


#: first replies that drifted from the nurse persona (the issue's, and one the detector sees as a clash), then the job
#: asked about again
DRIFTS = ("My name is Emily Rodriguez, and I'm a freelance creative writing assistant.",
          "I'm a teacher at a primary school here in Paris.")
DRIFT_QUESTIONS = ("What do you do for work?", "Tell me about your job.", "Do you like your work?",
                   "Where do you work?", "How long have you done that job?")


def cmd_drift(args) -> int:
    """After a drifted first reply: nurse candidates rejected for contradicting the drift, and nurse replies sent,
    with the persona outranking the drift and without (its agreement bar set out of reach)."""
    import guard.judge.building as building
    from bots.registry import make_bot
    from guard.judge.pipeline import load_guard

    guard, bot = load_guard(args.detector), make_bot(args.bot)
    out = {"machine": machine_info(), "detector": args.detector, "bot": args.bot, "runs": []}
    for rule in ("persona outranks the drift", "off"):
        building.PERSONA_AGREEMENT = 0.5 if rule != "off" else 2.0  # 2.0: no candidate ever agrees enough
        for drift in DRIFTS:
            counts = {"nurse_candidates": 0, "nurse_candidates_rejected": 0, "nurse_replies_sent": 0,
                      "replies": 0, "sides_taken": 0}
            for seed in args.seeds:
                for number, question in enumerate(DRIFT_QUESTIONS):
                    rows = play_after(bot, guard, [("user", "Hi, who are you?"), ("bot", drift)], question,
                                      seed * 100 + number)
                    counts["replies"] += 1
                    counts["nurse_replies_sent"] += "nurse" in rows["reply"].lower()
                    nurse = [c for c in rows["candidates"] if "nurse" in c["text"].lower() and c["origin"] == "bot"]
                    counts["nurse_candidates"] += len(nurse)
                    counts["nurse_candidates_rejected"] += sum(c["contradicts"] for c in nurse)
                    counts["sides_taken"] += rows["sides_taken"]
            out["runs"].append({"rule": rule, "drift": drift, **counts})
            print(f"{rule:28} {drift[:40]:42} " + " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
    building.PERSONA_AGREEMENT = 0.5
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        write_json(args.json, out, indent=2)
    return 0


def served_after(url: str, history, message: str, seed: int, persona=PERSONA) -> dict:
    """The same reply through the guard server (POST /v1/chat/completions), seeded; read off its ``guard`` field."""
    import requests

    from guard.judge.report import BotTurnReport

    roles = {"user": "user", "bot": "assistant"}
    messages = [{"role": "system", "content": "\n".join(persona)}] + [
        {"role": roles[speaker], "content": text} for speaker, text in history] + [{"role": "user", "content": message}]
    response = requests.post(f"{url}/v1/chat/completions", json={"messages": messages, "seed": seed}, timeout=300)
    response.raise_for_status()
    body = response.json()
    report = BotTurnReport.from_json(body["guard"]["report"])
    return {"reply": body["choices"][0]["message"]["content"], "flagged": report.reply_flagged,
            "sent_by": str(report.chosen.origin) if report.chosen is not None else "safe reply",
            "candidates": [{"text": c.text, "origin": str(c.origin), "contradicts": c.contradicts,
                            "score": round(c.contradiction_score or 0.0, 4)} for c in report.candidates],
            "reminder": None if report.reminder is None else report.reminder.opening}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_reminders", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    script = sub.add_parser("script", help="the goading script with each way of reminding")
    script.add_argument("--bots", nargs="+", default=["embedded"])
    script.add_argument("--ways", nargs="+", default=list(WAYS), choices=WAYS)
    script.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    script.add_argument("--detector", default="embedded")
    script.add_argument("--json", type=Path, default=None)
    script.set_defaults(func=cmd_script)
    teacher = sub.add_parser("teacher", help="'Wait, aren't you a teacher?' after 'I work as a nurse', per seed")
    teacher.add_argument("--bot", default="embedded")
    teacher.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    teacher.add_argument("--detector", default="embedded")
    teacher.add_argument("--served", action="store_true", help="through the guard server over HTTP")
    drift = sub.add_parser("drift", help="after a drifted first reply: the persona over the drift, and without")
    drift.add_argument("--bot", default="embedded")
    drift.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    drift.add_argument("--detector", default="embedded")
    drift.add_argument("--json", type=Path, default=None)
    drift.set_defaults(func=cmd_drift)
    teacher.add_argument("--json", type=Path, default=None)
    teacher.set_defaults(func=cmd_teacher)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
