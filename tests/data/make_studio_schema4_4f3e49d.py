"""Write tests/data/studio_schema4_4f3e49d.db with the studio code of commit 4f3e49d (schema 4, before issue 24 folded
a session's settings into one record and embedded the detector's verdict in each candidate report).

Run it against that commit's tree, not this one (it uses ``GuardSettings``, ``ReplySettings`` and the flat
``SessionInfo``, which are gone), from the checkout:

    git worktree add --detach /tmp/old4f3 4f3e49d
    cd /tmp/old4f3 && HF_HUB_OFFLINE=1 PYTHONPATH=.:tests CHECKOUT/.venv/bin/python \
        CHECKOUT/tests/data/make_studio_schema4_4f3e49d.py OUT.db
    cd CHECKOUT && git worktree remove /tmp/old4f3

It stores what a schema-4 chat wrote: a session whose sidebar changed between turns (each bot turn keeps its own
bot, preset and guard settings; the session its λ and prefilter), re-rank, penalty and block turns with evidence from
history, a persona line and an intra-sentence clash, a suggestion used, two annotators; and a second session in flag
mode. What that code read back (every session as ``Store.load_session`` returned it, the annotations, suggestions,
row counts and the DECODE export) is dumped beside the database as ``OUT.json`` for
tests/test_storage_migration_schema4.py.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from fake_nli import ScriptedScorer

from bots.base import PRESETS
from bots.scripted import ScriptedBot
from conversation.guarding import guarded_reply
from conversation.jsonform import jsonable
from conversation.records import Conversation, GuardSettings
from guard.detector import ContradictionDetector
from studio.export import decode_records
from studio.goading import suggest
from studio.storage import Annotation, SessionInfo, Store

CONTRA = (0.02, 0.03, 0.95)
ENTAIL = (0.9, 0.05, 0.05)
TABLE = {
    ("I have a dog named Max.", "I have never had a dog."): CONTRA,
    ("I live in Ohio.", "I moved to Texas last year."): CONTRA,
    ("I love hiking", "I hate hiking."): CONTRA,
    ("I have a dog named Max.", "I sold my only cat."): (0.3, 0.1, 0.6),  # under τ 0.7: not evidence
}
SCRIPT = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2}, {"text": "Max loves long walks in the park.", "score": -0.9}],
    [{"text": "I moved to Texas last year.", "score": -0.3}, {"text": "I love hiking but I hate hiking.", "score": -0.5}],
]}


def main(out: Path) -> None:
    out.unlink(missing_ok=True)
    store = Store(f"sqlite:///{out}")
    detector = ContradictionDetector(ScriptedScorer(TABLE), threshold=0.7)
    bot = ScriptedBot(SCRIPT)

    # --- a chat session: re-rank, then penalty with another preset, then block; the sidebar moved between turns
    chat = Conversation(persona=["I live in Ohio.", "I love hiking."], record_id="chat-schema4-0001")
    methods = {0: "typed"}
    chat.add("user", "Do you have any pets?")
    guarded_reply(chat, bot, detector, GuardSettings(mode="rerank", threshold=0.7, num_candidates=2),
                  PRESETS["fast"], detector_name="scripted-nli", bot_name="scripted", preset="fast")
    store.save_session(SessionInfo(chat.record_id, bot="scripted", preset="fast", guard_mode="rerank",
                                   detector="scripted-nli", threshold=0.7, num_candidates=2,
                                   persona=list(chat.persona), player="ann", penalty_lambda=1.0, prefilter=True))
    store.save_turns(chat.record_id, chat.turns, methods)
    offered = suggest(chat.history(), methods=["inquire_bot"], minimum=1, seed=1)
    ids = store.save_suggestions(chat.record_id, 1, offered.suggestions, offered.ranking)
    chat.add("user", offered.suggestions[0].text)
    methods[2] = offered.suggestions[0].method
    store.mark_suggestion_used(ids[0], 2, edited=True)
    guarded_reply(chat, bot, detector, GuardSettings(mode="penalty", threshold=0.7, num_candidates=2,
                                                     penalty_lambda=2.5),
                  PRESETS["greedy"], detector_name="scripted-nli", bot_name="scripted", preset="greedy")
    chat.add("user", "Where do you live now?")
    methods[4] = "typed"
    guarded_reply(chat, bot, detector, GuardSettings(mode="block", threshold=0.7, num_candidates=2),
                  PRESETS["fast"], detector_name="scripted-nli", bot_name="scripted", preset="fast")
    store.save_session(SessionInfo(chat.record_id, bot="scripted", preset="fast", guard_mode="block",
                                   detector="scripted-nli", threshold=0.7, num_candidates=2,
                                   persona=list(chat.persona), player="ann", penalty_lambda=2.5, prefilter=False))
    store.save_turns(chat.record_id, chat.turns, methods, {2: ids[0]})
    store.annotate(Annotation(chat.record_id, 3, "ann", True, [1], "history", True, "the dog again"))
    store.annotate(Annotation(chat.record_id, 5, "bob", True, [], "intra", False, "hiking, both ways"))

    # --- a second session in flag mode, no persona
    flag = Conversation(record_id="chat-schema4-0002")
    flag.add("user", "Tell me about you.")
    guarded_reply(flag, bot, detector, GuardSettings(mode="flag", threshold=0.7, num_candidates=1),
                  PRESETS["greedy"], detector_name="scripted-nli", bot_name="scripted", preset="greedy")
    flag.add("user", "And pets?")
    guarded_reply(flag, bot, detector, GuardSettings(mode="flag", threshold=0.7, num_candidates=1),
                  PRESETS["greedy"], detector_name="scripted-nli", bot_name="scripted", preset="greedy")
    store.save_session(SessionInfo(flag.record_id, bot="scripted", preset="greedy", guard_mode="flag",
                                   detector="scripted-nli", threshold=0.7, num_candidates=1, player="dan",
                                   penalty_lambda=1.0, prefilter=True))
    store.save_turns(flag.record_id, flag.turns, {0: "typed", 2: "typed"})
    store.annotate(Annotation(flag.record_id, 3, "dan", True, [1], "history", True))

    sessions = {}
    for info in store.list_sessions():
        loaded = store.load_session(info.id)
        sessions[info.id] = {
            "info": jsonable({**asdict(loaded.info), "created_at": None, "updated_at": None}),
            "turns": [{"turn": jsonable(t.turn), "method": t.method, "suggestion_id": t.suggestion_id}
                      for t in loaded.turns],
        }
    dump = {"commit": "4f3e49d450113f35afaceaefe7fc85afc8396b1a", "schema_version": store.schema_version,
            "sessions": sessions, "annotations": jsonable(store.annotations()),
            "suggestions": jsonable([{k: v for k, v in s.items() if k != "created_at"} for s in store.suggestions()]),
            "export": list(decode_records(store)), "counts": store.counts()}
    out.with_suffix(".json").write_text(json.dumps(dump, indent=1, ensure_ascii=False) + "\n")
    store.dispose()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
