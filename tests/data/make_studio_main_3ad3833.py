"""Write tests/data/studio_main_3ad3833.db with the studio code of commit 3ad3833 (before issue 18's layout).

Run it against that commit's tree, not this one (it imports ``ui.chat``, which moved), from the checkout:

    mkdir old && git archive 3ad3833 | tar -x -C old
    cd old && HF_HUB_OFFLINE=1 PYTHONPATH=.:tests ../.venv/bin/python ../tests/data/make_studio_main_3ad3833.py OUT.db

It stores what the studio writes in use: a chat session (persona, typed and suggested user turns, re-rank and
block turns with evidence from history, persona and an intra-sentence clash, role readings, a re-judge, a
suggestion used, two annotators), an imported transcript and a self-play run with its judgements. Each
session is also dumped beside the database as JSON (``OUT.json``: ``Store.load_session`` and the DECODE
export as that code saw them), so tests/test_storage_migration.py can check the new code reads the same.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

from fake_nli import ScriptedScorer
from ui.chat import Conversation, GuardSettings, guarded_reply, jsonable, rejudge

from bots.base import PRESETS
from bots.scripted import ScriptedBot
from guard.detector import ContradictionDetector
from studio.export import decode_records
from studio.goading import suggest
from studio.redteam import Judge, RedteamSettings, run_redteam
from studio.storage import Annotation, SessionInfo, Store
from studio.transcripts import import_transcript, read_transcripts

CONTRA = (0.02, 0.03, 0.95)
ENTAIL = (0.9, 0.05, 0.05)
TABLE = {
    ("I have a dog named Max.", "I have never had a dog."): CONTRA,
    ("I live in Ohio.", "I moved to Texas last year."): CONTRA,
    ("I love hiking", "I hate hiking."): CONTRA,
    ("Do you have any pets?", "I have never had a dog."): ENTAIL,  # role reading: the user's side
}
SCRIPT = {"replies": [
    [{"text": "I have a dog named Max.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2}, {"text": "Max loves long walks in the park.", "score": -0.9}],
    [{"text": "I moved to Texas last year.", "score": -0.3}, {"text": "I love hiking but I hate hiking.", "score": -0.5}],
]}


def main(out: Path) -> None:
    out.unlink(missing_ok=True)
    store = Store(f"sqlite:///{out}")
    detector = ContradictionDetector(ScriptedScorer(TABLE), threshold=0.5)

    # --- a chat session: re-rank, then block (every candidate contradicts), a suggestion used, re-judged
    chat = Conversation(persona=["I live in Ohio.", "I love hiking."], record_id="chat-fixture0001")
    methods = {}
    bot = ScriptedBot(SCRIPT)
    chat.add("user", "Do you have any pets?")
    methods[0] = "typed"
    guarded_reply(chat, bot, detector, GuardSettings(mode="rerank", threshold=0.5, num_candidates=2),
                  PRESETS["fast"], detector_name="scripted-nli")
    offered = suggest(chat.history(), methods=["inquire_bot"], minimum=1, seed=1)
    store.save_session(SessionInfo(chat.record_id, bot="scripted", preset="fast", guard_mode="rerank",
                                   detector="scripted-nli", threshold=0.5, num_candidates=2,
                                   persona=list(chat.persona), player="ann"))
    store.save_turns(chat.record_id, chat.turns, methods)
    ids = store.save_suggestions(chat.record_id, 1, offered.suggestions, offered.ranking)
    chat.add("user", offered.suggestions[0].text)
    methods[2] = offered.suggestions[0].method
    store.mark_suggestion_used(ids[0], 2, edited=False)
    guarded_reply(chat, bot, detector, GuardSettings(mode="rerank", threshold=0.5, num_candidates=2),
                  PRESETS["fast"], detector_name="scripted-nli")
    chat.add("user", "Where do you live now?")
    methods[4] = "typed"
    guarded_reply(chat, bot, detector, GuardSettings(mode="block", threshold=0.5, num_candidates=2),
                  PRESETS["fast"], detector_name="scripted-nli")
    store.save_turns(chat.record_id, chat.turns, methods, {2: ids[0]})
    rejudged = rejudge(chat, detector, GuardSettings(mode="flag", threshold=0.5), detector_name="scripted-nli")
    rejudged.turns[3] = chat.turns[3]  # turn 3 keeps its first report; turns 1 and 5 are re-judged
    store.replace_reports(chat.record_id, rejudged.turns)
    store.annotate(Annotation(chat.record_id, 3, "ann", True, [1], "history", True, "the dog again"))
    store.annotate(Annotation(chat.record_id, 3, "bob", True, [1], "role", False))
    store.annotate(Annotation(chat.record_id, 5, "ann", False, guard_right=None))

    # --- an imported transcript (the chat page's download, with its guard reports)
    [transcript] = read_transcripts(json.dumps(chat.to_decode_record()).encode(), "chat.json")
    imported = import_transcript(store, transcript, SessionInfo(id="", player="carol"))

    # --- self-play with the scripted bot; the guard's own detector and a second judge
    judge = ContradictionDetector(ScriptedScorer(TABLE), threshold=0.5, method="unstructured")
    settings = RedteamSettings(bot="scripted", guard_mode="flag", methods=["inquire_bot", "short"], sessions=2,
                               turns=2, detector="scripted-nli", threshold=0.5, num_candidates=2, use_lm=False,
                               persona=["I live in Ohio."])
    run = run_redteam(settings, store, ScriptedBot(SCRIPT), detector, Judge("scripted-nli:structured", detector),
                      Judge("scripted-nli:unstructured", judge), PRESETS["fast"])

    sessions = {}
    for info in store.list_sessions():
        loaded = store.load_session(info.id)
        sessions[info.id] = {
            "info": jsonable({**asdict(loaded.info), "created_at": None, "updated_at": None}),
            "turns": [{"turn": jsonable(t.turn), "method": t.method, "suggestion_id": t.suggestion_id}
                      for t in loaded.turns],
        }
    dump = {"sessions": sessions, "annotations": jsonable(store.annotations()),
            "suggestions": jsonable([{k: v for k, v in s.items() if k != "created_at"} for s in store.suggestions()]),
            "export": list(decode_records(store)), "counts": store.counts(),
            "redteam_run": run.run_id, "imported": imported}
    out.with_suffix(".json").write_text(json.dumps(dump, indent=1, ensure_ascii=False) + "\n")
    store.dispose()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
