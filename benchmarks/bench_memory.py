"""The bot's memory after a drifted first reply (issue 52): the nurse persona's bot has answered "Hi! Tell me about
yourself." with a drift (after.json's nurse s1 m00, "My name's Alexei Petrov, and I am a 21-year-old Russian expat
living in Paris."), then the user asks "So what do you do for work?". One guarded turn per seed, the chat's code path
(``conversation.guarding.guarded_reply``: the embedded bot, 4 candidates, the embedded detector, re-rank, reminders
on), with the memory on and off; each sent reply printed with who wrote it, for people to read. A reply is
"bot_written" when the bot wrote all of it: unprompted, or after a reminder that restated the fact in its persona, not
after one that opened its reply with the guard's words (``opened_by_guard``).

    HF_HUB_OFFLINE=1 .venv/bin/python -m benchmarks.bench_memory --seeds 1 2 3 4 5 \\
        --json benchmarks/results/memory/drift.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.machine import machine_info, write_json

PERSONA = ["I have two dogs.", "I live in Paris.", "I work as a nurse."]
DRIFT = "My name's Alexei Petrov, and I am a 21-year-old Russian expat living in Paris."
OPENING = "Hi! Tell me about yourself."
QUESTION = "So what do you do for work?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from bots.base import PRESETS
    from bots.registry import make_bot
    from conversation.guarding import guarded_reply
    from conversation.records import BOT, USER, ChatSettings, ChatTurn, Conversation
    from guard.judge.pipeline import load_guard

    bot, guard = make_bot("embedded"), load_guard("embedded")
    rows = []
    for memory in (True, False):
        for seed in args.seeds:
            conversation = Conversation(persona=list(PERSONA))
            for agent, text in ((USER, OPENING), (BOT, DRIFT), (USER, QUESTION)):
                conversation.append(ChatTurn(turn_id=len(conversation.turns), agent_id=agent, text=text))
            settings = ChatSettings(bot="embedded", preset="fast", decoding=PRESETS["fast"].replace(seed=seed),
                                    persona=list(PERSONA), memory=memory)
            turn = guarded_reply(conversation, bot, guard, settings, classroom=None)
            chosen, reminder = turn.report.chosen, turn.report.reminder
            row = {"memory": memory, "seed": seed, "reply": turn.text,
                   "written_by": str(chosen.origin) if chosen is not None else "safe reply",
                   # how the bot was reminded ("restated": the fact in its persona, no words of the reply given it;
                   # "opening": its reply opened with the guard's words), and whether the reply sent begins with them
                   "reminded_by": str(reminder.method) if reminder is not None else "",
                   "opened_by_guard": reminder is not None and turn.text.startswith(reminder.opening),
                   "recalled": list(turn.report.memory)}
            row["bot_written"] = row["written_by"] in ("bot", "reminded") and not row["opened_by_guard"]
            rows.append(row)
            how = f", {row['reminded_by']}" if row["reminded_by"] and row["written_by"] == "reminded" else ""
            print(f"memory {'on ' if memory else 'off'} seed {seed}: [{row['written_by']}{how}] {turn.text}", flush=True)
    if args.json:
        write_json(args.json, {"machine": machine_info(), "persona": PERSONA, "drift": DRIFT, "question": QUESTION,
                               "rows": rows}, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
