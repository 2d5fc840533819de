"""The goading studio without Streamlit: suggestions, storage (SQLite and PostgreSQL), scores, export, CLI."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from reports import candidate

from conversation.records import ChatSettings, Conversation
from guard.config import JudgeSettings
from guard.judge.report import BotTurnReport
from guard.judge.verdicts import IntraCheck, PairScore, RoleCheck, VerdictDetails
from guard.records import Turn
from guard.vocabulary import Category, GuardMode, Method, PremiseSource
from harness.postgres import postgres_server, why_unavailable
from harness.studio_writers import write_sessions_at_once
from studio.goading import FAMILIES, METHODS, suggest
from studio.scores import agreement, by_turn, outcome_frame, scoreboard, session_score
from studio.storage import SCHEMA_VERSION, Annotation, SessionInfo, Store, StoreError

REPO = Path(__file__).resolve().parent.parent
HISTORY = [
    Turn(0, "user", "Do you have any pets?"),
    Turn(1, "bot", "Yes, I have a dog named Max. I live in Ohio with my two cats."),
    Turn(2, "user", "I love hiking in the mountains."),
    Turn(3, "bot", "I am a nurse at the city hospital. My favorite food is pizza."),
]


# ---------------------------------------------------------------------------- goading
def test_suggestions_cover_the_trigger_families_with_labels():
    result = suggest(HISTORY)
    assert 3 <= len(result.suggestions) <= 5
    families = {next(i for i, f in enumerate(FAMILIES) if s.method in f) for s in result.suggestions}
    assert len(families) == len(result.suggestions)  # one per family
    assert all(s.method in METHODS and s.label and s.text for s in result.suggestions)
    assert "template ranking" in result.ranking
    said = {t.text.lower() for t in HISTORY}
    assert not any(s.text.lower() in said for s in result.suggestions)


def test_inquiring_history_asks_about_what_the_bot_said():
    questions = {s.text for s in suggest(HISTORY[:2], methods=["inquire_bot"], limit=1).suggestions}
    assert questions & {"What is your dog's name?", "Where do you live?", "How many cats do you have?"}
    user = suggest(HISTORY, methods=["inquire_user"], limit=1).suggestions
    assert user and user[0].text.startswith("Do you remember") and user[0].source_turn_id == 2


def test_perturbation_negates_an_earlier_user_question():
    result = suggest(HISTORY[:2], methods=["perturb_negation"], limit=1)
    assert [s.text for s in result.suggestions] == ["So you do not have any pets?"]
    assert result.suggestions[0].source_turn_id == 0


def test_short_utterance_and_paraphrase_always_available():
    history = [Turn(0, "user", "Hello there"), Turn(1, "bot", "Hi!")]
    result = suggest(history)
    assert {s.method for s in result.suggestions} >= {"short", "paraphrase"}
    assert len(result.suggestions) >= 3


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown goading method"):
        suggest(HISTORY, methods=["shouting"])


def test_follow_ups_are_ranked_by_the_scorer_when_given():
    calls = []

    def scorer(contexts, messages):
        calls.append(len(messages))
        # the question scores higher with its referent than without: FQness = its length
        return [float(len(m)) if any(c.text and "nurse" in c.text for c in ctx) else 0.0
                for ctx, m in zip(contexts, messages)]

    scorer.name = "fake LM"
    result = suggest(HISTORY, scorer=scorer, methods=["follow_up"], limit=1)
    [follow_up] = result.suggestions
    assert result.ranking == "FQness under fake LM"
    assert "nurse" in follow_up.text and follow_up.score and follow_up.score > 0
    assert calls and calls[0] % 2 == 0  # with and without the referent for each candidate


def test_refine_replaces_only_the_follow_up():
    from studio.goading import refine_follow_ups

    first = suggest(HISTORY)
    assert "template ranking" in first.ranking

    def scorer(contexts, messages):  # prefers questions about the city hospital
        return [float("hospital" in m) * (1.0 if any("hospital" in c.text for c in ctx) else 0.0)
                for ctx, m in zip(contexts, messages)]

    refined = refine_follow_ups(first, HISTORY, scorer)
    assert refined.ranking.startswith("FQness under")
    pairs = list(zip(first.suggestions, refined.suggestions))
    assert all(a == b for a, b in pairs if a.method != "follow_up")
    [follow_up] = [b for _, b in pairs if b.method == "follow_up"]
    assert "hospital" in follow_up.text and follow_up.score == 1.0


def _tiny_causal_lm(folder: Path):
    """A tiny random GPT-2 with a word-level fast tokenizer built locally (no hub)."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    words = ["[UNK]", "[PAD]", "[EOS]", "Person", "1", "2", ":", "A", "casual", "chat", "between", "two", "people",
             ".", "I", "have", "a", "dog", "What", "is", "your", "name", "?", "do", "you"]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]",
                                        eos_token="[EOS]")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(words), n_positions=64, n_embd=16, n_layer=1, n_head=2)).eval()
    return model, tokenizer


def test_causal_lm_scorer_sums_the_message_tokens(tmp_path):
    import torch

    from studio.lm import CausalLMScorer, continuation_scorer

    model, tokenizer = _tiny_causal_lm(tmp_path)

    class LocalBot:
        name = "tiny"

        def __init__(self):
            self.model, self.tokenizer = model, tokenizer

        def generate(self, *args, **kwargs):
            raise NotImplementedError

    scorer = continuation_scorer(LocalBot())
    assert isinstance(scorer, CausalLMScorer)
    contexts = [[Turn(0, "bot", "I have a dog .")], []]
    scores = scorer(contexts, ["What is your dog name ?", "What is your dog name ?"])
    # by hand for the first: log-probabilities of the message's 6 tokens at the end of the text
    text, start = scorer.render(contexts[0], "What is your dog name ?")
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0, :-1], -1)
    expected = float(sum(logprobs[i, ids[0, i + 1]] for i in range(ids.shape[1] - 7, ids.shape[1] - 1)))
    assert scores[0] == pytest.approx(expected, abs=1e-4)
    assert scores[0] != scores[1] and all(math.isfinite(s) and s < 0 for s in scores)
    assert continuation_scorer(type("Remote", (), {"model": "gpt-4o", "tokenizer": None})()) is None


# ---------------------------------------------------------------------------- storage
def _report(score: float, contradicts: bool, evidence_turn: int = 1) -> BotTurnReport:
    pair = PairScore(PremiseSource.HISTORY, evidence_turn, "I have a dog.", "I never had a dog.", score)
    evidence = (PairScore(PremiseSource.HISTORY, evidence_turn, "I have a dog.", "I never had a dog.", score),) \
        if contradicts else ()
    details = VerdictDetails(method=Method.STRUCTURED, turn_id=3, threshold=0.5, n_pairs=2, history_score=score,
                             paired_turn_ids=(evidence_turn,),
                             intra=IntraCheck(clauses=("I never had a dog.",), pairs=(), score=0.0, threshold=0.9),
                             role=RoleCheck(decided=True, user_reading=0.1, bot_reading=0.8, user_pair=pair))
    return BotTurnReport(JudgeSettings.resolve(mode=GuardMode.FLAG, threshold=0.5), "tiny", 0, False, (
        candidate(0, "reply", -0.3, score, contradicts, Category.HISTORY if contradicts else Category.NONE, True,
                        "best", -0.3, evidence, details),
        candidate(1, "other", -0.9, 0.1, False, Category.NONE, False, "not chosen", -0.9)))


def _conversation(n_bot_turns: int = 2, flagged_at: int = 2) -> Conversation:
    conversation = Conversation(persona=["I have a dog."])
    for k in range(1, n_bot_turns + 1):
        conversation.add("user", f"question {k}")
        conversation.add("bot", f"answer {k}", _report(0.9 if k == flagged_at else 0.1, k == flagged_at))
    return conversation


@pytest.fixture()
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'studio.db'}"


def _roundtrip(url: str) -> None:
    store = Store(url)
    assert store.schema_version == SCHEMA_VERSION
    conversation = _conversation()
    store.save_session(SessionInfo(conversation.record_id, ChatSettings(bot="scripted", preset="fast", guard_mode="flag",
                                                                        persona=conversation.persona), player="ann"))
    assert store.save_turns(conversation.record_id, conversation.turns, {0: "typed", 2: "inquire_bot"}) == 4
    assert store.save_turns(conversation.record_id, conversation.turns) == 0  # idempotent
    loaded = store.load_session(conversation.record_id)
    again = loaded.conversation()
    assert [(t.turn_id, t.agent_id, t.text) for t in again.turns] == \
           [(t.turn_id, t.agent_id, t.text) for t in conversation.turns]
    assert again.turns[3].report == conversation.turns[3].report  # nested dataclasses and enums typed again
    assert isinstance(again.turns[3].report.candidates[0].details.role.user_pair, PairScore)
    assert again.turns[3].report.candidates[0].evidence[0].source is PremiseSource.HISTORY
    assert loaded.methods == {0: "typed", 2: "inquire_bot"}
    assert again.to_decode_record()["is_contradiction"] is True
    store.annotate(Annotation(conversation.record_id, 3, "ann", True, [1], "history", True))
    store.annotate(Annotation(conversation.record_id, 3, "ann", False))  # replaces ann's label
    assert [(a.annotator, a.contradiction, a.category) for a in store.annotations()] == [("ann", False, "none")]
    with pytest.raises(ValueError, match="not a stored bot turn"):
        store.annotate(Annotation(conversation.record_id, 2, "ann", False))
    assert store.counts() == {"sessions": 1, "turns": 4, "candidates": 4, "suggestions": 0, "annotations": 1}
    # a re-judge (another τ) replaces the stored reports, flags and candidates of the bot turns
    rejudged = _conversation(flagged_at=1)
    rejudged.turns = [replace(t, report=replace(t.report, settings=replace(t.report.settings, threshold=0.3)))
                      if t.report else t for t in rejudged.turns]
    assert store.replace_reports(conversation.record_id, rejudged.turns) == 2
    again = store.load_session(conversation.record_id).conversation()
    assert [t.report.threshold for t in again.turns if t.report] == [0.3, 0.3]
    assert again.turns[1].report.any_contradiction and not again.turns[3].report.any_contradiction
    assert store.counts()["candidates"] == 4
    store.dispose()


def test_sqlite_roundtrip(sqlite_url):
    _roundtrip(sqlite_url)
    mode = sqlite3.connect(sqlite_url.removeprefix("sqlite:///")).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def _concurrent_sessions(url: str, sessions: int = 5, turns: int = 10) -> dict[str, int]:
    """Each writer its own engine (like separate browser sessions / processes), all writing at once."""
    run = write_sessions_at_once(url, sessions, turns, lambda k, t: _report(0.2, False))
    assert not run.errors, run.errors
    return run.counts


def test_five_sessions_writing_at_once_lose_nothing_sqlite(sqlite_url):
    counts = _concurrent_sessions(sqlite_url)
    assert counts["sessions"] == 5 and counts["turns"] == 5 * 10 * 2 and counts["candidates"] == 5 * 10 * 2


V1_DDL = """
CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, applied_at DATETIME);
CREATE TABLE sessions (id VARCHAR(64) NOT NULL PRIMARY KEY, created_at DATETIME, updated_at DATETIME,
  source VARCHAR(16), bot VARCHAR(200), preset VARCHAR(64), guard_mode VARCHAR(16), detector VARCHAR(500),
  threshold FLOAT, num_candidates INTEGER, persona JSON, meta JSON);
CREATE TABLE turns (id INTEGER NOT NULL PRIMARY KEY, session_id VARCHAR(64) REFERENCES sessions(id),
  turn_index INTEGER, speaker VARCHAR(8), text TEXT, created_at DATETIME, method VARCHAR(32), suggestion_id INTEGER,
  guard JSON, flagged BOOLEAN, reply_flagged BOOLEAN, CONSTRAINT uq_turns_session_turn UNIQUE (session_id, turn_index));
CREATE TABLE candidates (id INTEGER NOT NULL PRIMARY KEY, turn_id INTEGER REFERENCES turns(id), position INTEGER,
  text TEXT, generator_score FLOAT, contradiction_score FLOAT, contradicts BOOLEAN, category VARCHAR(16),
  chosen BOOLEAN, reason TEXT, verdict JSON);
INSERT INTO schema_version VALUES (1, '2026-11-01 10:00:00');
INSERT INTO sessions VALUES ('old-session', '2026-11-01 10:00:00', '2026-11-01 10:00:00', 'chat', 'embedded',
  'fast', 'rerank', 'embedded', 0.86, 4, '["I have a dog."]', '{}');
INSERT INTO turns VALUES (1, 'old-session', 0, 'user', 'Do you have pets?', '2026-11-01 10:00:00', 'typed', NULL,
  NULL, 0, 0);
INSERT INTO turns VALUES (2, 'old-session', 1, 'bot', 'I have a dog.', '2026-11-01 10:00:01', NULL, NULL,
  '{"mode": "rerank", "threshold": 0.86, "detector": "embedded", "chosen_index": 0, "used_fallback": false,
    "candidates": [{"index": 0, "text": "I have a dog.", "generator_score": -0.5, "contradiction_score": 0.01,
    "contradicts": false, "category": "none", "chosen": true, "reason": "sent"}], "timings": {}}', 0, 0);
"""


def test_upgrade_from_schema_1_keeps_old_sessions(tmp_path):
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_DDL)
    store = Store(f"sqlite:///{path}")
    # 3: the guard report stored once (issue 18); 4: settings per turn (issue 19); 5: persona evidence (issue 23)
    # 6: one settings record per session, reports embed their verdicts (issue 24); 7: sessions belong to a browser
    # (issue 38)
    assert store.schema_version == SCHEMA_VERSION == 7
    old = store.load_session("old-session")
    assert old.info.player is None and old.info.persona == ["I have a dog."]
    assert [t.turn.text for t in old.turns] == ["Do you have pets?", "I have a dog."]
    assert old.turns[1].turn.report.candidates[0].reason == "sent"
    store.annotate(Annotation("old-session", 1, "teacher", False))  # schema 2 tables work on the old session
    versions = [v for (v,) in sqlite3.connect(path).execute("SELECT version FROM schema_version ORDER BY version")]
    assert versions == [1, 2, 3, 4, 5, 6, 7]
    assert old.info.owner is None  # stored before sessions had owners: no browser's


def test_newer_schema_is_refused_and_left_alone(sqlite_url):
    Store(sqlite_url).dispose()
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, '2030-01-01')")
    with pytest.raises(StoreError, match="schema version 99, newer"):
        Store(sqlite_url)


@pytest.mark.parametrize("url, message", [
    ("not a url", "not a database URL"),
    ("postgresql+psycopg://user:secret@127.0.0.1:1/studio", "cannot open the studio database"),
    ("mysql://localhost/studio", "cannot open the studio database"),
])
def test_bad_urls_are_one_clear_line(url, message):
    with pytest.raises(StoreError, match=message) as caught:
        Store(url)
    assert "\n" not in str(caught.value) and "secret" not in str(caught.value)


def test_unreadable_file_is_an_error_and_stays_as_it_was(tmp_path, sqlite_url):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database\n" * 50)
    before = garbage.read_bytes()
    with pytest.raises(StoreError, match="file is not a database"):
        Store(f"sqlite:///{garbage}")
    assert garbage.read_bytes() == before
    with pytest.raises(StoreError, match="it is a folder"):
        Store(f"sqlite:///{tmp_path}")


# ---------------------------------------------------------------------------- PostgreSQL
@pytest.fixture(scope="module")
def postgres_url():
    reason = why_unavailable()
    if reason:
        pytest.skip(f"PostgreSQL tests skipped: {reason}")
    with postgres_server() as url:
        yield url


def _fresh_pg_database(base_url: str, name: str) -> str:
    import psycopg

    conninfo = base_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return base_url.rsplit("/", 1)[0] + f"/{name}"


def test_postgres_roundtrip(postgres_url):
    _roundtrip(_fresh_pg_database(postgres_url, "roundtrip"))


def test_five_sessions_writing_at_once_lose_nothing_postgres(postgres_url):
    counts = _concurrent_sessions(_fresh_pg_database(postgres_url, "concurrent"))
    assert counts["sessions"] == 5 and counts["turns"] == 100 and counts["candidates"] == 100


# ---------------------------------------------------------------------------- sessions belong to a browser
def _schema_6_database(url: str) -> None:
    """A studio database as schema 6 left it (before sessions had owners), with one chat session and its two turns:
    today's tables less ``sessions.owner`` and its index, and versions 1-6 recorded."""
    from sqlalchemy import create_engine, text

    from studio.storage.tables import Base

    engine = create_engine(url)
    with engine.begin() as conn:
        Base.metadata.create_all(conn)
        conn.execute(text("DROP INDEX ix_sessions_owner"))
        conn.execute(text("ALTER TABLE sessions DROP COLUMN owner"))
        for version in range(1, 7):
            conn.execute(text("INSERT INTO schema_version (version, applied_at) VALUES (:v, :t)"),
                         {"v": version, "t": "2026-11-20 10:00:00"})
        conn.execute(text("INSERT INTO sessions (id, created_at, updated_at, source, meta, player, settings) VALUES "
                          "('before-owners', :t, :t, 'chat', '{}', 'ann', :settings)"),
                     {"t": "2026-11-20 10:00:00", "settings": json.dumps({"bot": "scripted", "persona": []})})
        for index, speaker, said in ((0, "user", "Do you have pets?"), (1, "bot", "I have a dog.")):
            conn.execute(text("INSERT INTO turns (session_id, turn_index, speaker, text, created_at, flagged, "
                              "reply_flagged) VALUES ('before-owners', :i, :s, :x, :t, false, false)"),
                         {"i": index, "s": speaker, "x": said, "t": "2026-11-20 10:00:00"})
    engine.dispose()


def _sessions_belong_to_their_browser(url: str) -> None:
    """Schema 7 on a schema-6 database: the session stored before belongs to no browser (only the teacher lists it);
    a browser lists its own sessions; a session's owner is written once and never taken over."""
    from studio.storage import Viewer

    _schema_6_database(url)
    store = Store(url)
    try:
        assert store.schema_version == SCHEMA_VERSION == 7
        old = store.load_session("before-owners")
        assert old.info.owner is None and [t.turn.text for t in old.turns] == ["Do you have pets?", "I have a dog."]
        ann, bob = "a" * 64, "b" * 64
        store.save_session(SessionInfo("ann-chat", player="ann", owner=ann))
        store.save_session(SessionInfo("bob-chat", player="bob", owner=bob))
        store.save_session(SessionInfo("ann-chat", player="someone else", owner=bob))  # an update keeps the owner

        def listed(viewer):
            return [s.id for s in store.list_sessions(viewer=viewer)]

        assert listed(Viewer(ann)) == ["ann-chat"] and listed(Viewer(bob)) == ["bob-chat"]
        assert listed(Viewer(None)) == [] and listed(Viewer("c" * 64)) == []
        assert listed(Viewer(ann, teacher=True)) == listed(None) == ["before-owners", "ann-chat", "bob-chat"]
        assert store.session_info("ann-chat").owner == ann and store.session_info("ann-chat").player == "someone else"
        assert Viewer(bob).sees(store.session_info("bob-chat")) and not Viewer(bob).sees(old.info)
        assert Viewer(teacher=True).sees(old.info)
    finally:
        store.dispose()


def test_sessions_belong_to_their_browser_sqlite(sqlite_url):
    _sessions_belong_to_their_browser(sqlite_url)
    path = sqlite_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        indexes = {row[1] for row in conn.execute("PRAGMA index_list(sessions)")}
    assert "ix_sessions_owner" in indexes


def test_sessions_belong_to_their_browser_postgres(postgres_url):
    _sessions_belong_to_their_browser(_fresh_pg_database(postgres_url, "owners"))


def test_imports_and_self_play_belong_to_the_browser_that_made_them(sqlite_url):
    from studio.transcripts import import_transcript, read_transcripts

    store = Store(sqlite_url)
    try:
        [transcript] = read_transcripts(b"User: hi\nBot: I have a dog.", "chat.txt")
        mine = import_transcript(store, transcript, SessionInfo(id="", player="ann", owner="a" * 64))
        cli = import_transcript(store, transcript)  # the command line's import: no browser's
        assert (store.session_info(mine).owner, store.session_info(cli).owner) == ("a" * 64, None)
    finally:
        store.dispose()


# ---------------------------------------------------------------------------- scores and agreement
def test_session_scores_and_scoreboard(sqlite_url):
    store = Store(sqlite_url)
    conversation = _conversation(n_bot_turns=3, flagged_at=2)
    store.save_session(SessionInfo(conversation.record_id, ChatSettings(bot="b", preset="fast", guard_mode="flag"),
                                   player="p1"))
    store.save_turns(conversation.record_id, conversation.turns, {0: "typed", 2: "inquire_bot", 4: "short"})
    grouped = by_turn(store.annotations())
    score = session_score(store.load_session(conversation.record_id), grouped)
    assert (score.bot_turns, score.guard_flags, score.flagged_replies) == (3, 1, 1)
    assert score.turns_to_first_flag == 2 and score.triggers == {"inquire_bot": 1}
    store.annotate(Annotation(conversation.record_id, 5, "a", True, [1], "history"))
    store.annotate(Annotation(conversation.record_id, 5, "b", True, [1], "history"))
    store.annotate(Annotation(conversation.record_id, 3, "a", False))
    score = session_score(store.load_session(conversation.record_id), by_turn(store.annotations()))
    assert score.confirmed == 1 and score.turns_to_first_confirmed == 3 and score.triggers == {"short": 1}
    board = scoreboard(outcome_frame([store.load_session(conversation.record_id)], store.annotations()))
    row = board.set_index("method").loc["short"]
    assert (row["bot replies"], row["confirmed"], row["confirmed rate"]) == (1, 1, 1.0)


def _repaired_report() -> BotTurnReport:
    """Repair mode: candidate 0 contradicted turn 1 through one sentence, which was cut before the rest was sent."""
    from guard.judge.policies import Repair

    report = _report(0.9, True)
    pair = report.candidates[0].evidence[0]
    repaired = replace(report.candidates[0], text="I never had a dog. I like tea.",
                       repair=Repair(0, "I never had a dog.", "I like tea.",
                                     'contradicts turn 1 ("I have a dog.") with probability 0.90', (pair,)))
    return replace(report, settings=replace(report.settings, mode=GuardMode.REPAIR), decided_by=None,
                   candidates=(repaired, *report.candidates[1:]))


def test_a_repaired_reply_is_stored_whole_counted_apart_and_exported_as_sent(sqlite_url):
    from studio.export import decode_records

    conversation = Conversation(persona=["I have a dog."])
    conversation.add("user", "question 1")
    conversation.add("bot", "I have a dog.", _report(0.1, False))
    conversation.add("user", "question 2")
    conversation.add("bot", "I like tea.", _repaired_report(),
                     ChatSettings(bot="b", guard_mode="repair", repair_fallback="block"))
    store = Store(sqlite_url)
    store.save_session(SessionInfo(conversation.record_id, ChatSettings(bot="b", guard_mode="repair",
                                                                        repair_fallback="penalty")))
    store.save_turns(conversation.record_id, conversation.turns, {0: "typed", 2: "inquire_bot"})
    session = store.load_session(conversation.record_id)
    # the report comes back with its repair, the settings with their fallback
    turn = session.conversation().turns[3]
    assert turn.report == conversation.turns[3].report and turn.report.repair.removed == "I never had a dog."
    assert turn.settings.repair_fallback == GuardMode.BLOCK
    assert session.info.settings.repair_fallback == GuardMode.PENALTY
    # the guard found a contradicting candidate (a flag), but the reply sent was not flagged: it is counted apart
    score = session_score(session, {})
    assert (score.guard_flags, score.flagged_replies, score.repaired_replies) == (1, 0, 1)
    # the export says what was sent: not flagged, no score for a text never scored whole, and what was cut
    [_, record] = list(decode_records(store))
    meta = record["meta"]
    assert meta["guard_flagged"] is False and meta["guard_score"] is None and meta["guard_mode"] == "repair"
    assert meta["guard_repair"] == {"candidate": "I never had a dog. I like tea.", "removed": "I never had a dog.",
                                    "why": 'contradicts turn 1 ("I have a dog.") with probability 0.90',
                                    "candidate_score": 0.9}
    assert record["turns"][-1]["text"] == "I like tea."


def test_kappas_match_hand_computation():
    a = [True, True, False, False]
    b = [True, False, False, False]
    labels = []
    for i, (x, y) in enumerate(zip(a, b)):
        labels.append(Annotation("s", i, "ann1", x, [0] if x else [], "history" if x else "none"))
        labels.append(Annotation("s", i, "ann2", y, [0] if y else [], "history" if y else "none"))
    report = agreement(labels)
    assert report.cohen_contradiction[0].value == pytest.approx(0.5)  # po 0.75, pe 0.5
    assert report.fleiss_contradiction.value == pytest.approx(0.21875 / 0.46875, abs=1e-4)
    assert report.fleiss_contradiction.items == 4
    same = agreement([Annotation("s", 0, "x", False), Annotation("s", 0, "y", False)])
    assert same.cohen_contradiction[0].value is None  # one label everywhere: undefined


# ---------------------------------------------------------------------------- export, import, CLI
def _studio(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "studio", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}, timeout=600)


#: the fields of an exported record that name turns (or persona lines) by their integer id
TURN_ID_FIELDS = ("turn_id", "aggregated_contradiction_indices", "contradicted_turns", "contradicted_persona",
                  "persona_evidence")


def _turn_ids(value, field: str = "") -> list[tuple[str, object]]:
    """Every (field, id) in an exported record, however deeply nested."""
    if isinstance(value, dict):
        return [pair for key, inner in value.items() for pair in _turn_ids(inner, key)]
    if isinstance(value, list):
        if field in TURN_ID_FIELDS:
            return [(field, v) for v in value]
        return [pair for inner in value for pair in _turn_ids(inner, field)]
    return [(field, value)] if field in TURN_ID_FIELDS else []


def test_the_decode_export_writes_turn_ids_as_integers(tmp_path):
    """DECODE's turn ids are integers, and guard's reader refuses anything else: the export writes every turn id, the
    indices and the annotators' turn and persona lists as JSON integers - also for a migrated schema-4 database and
    for annotations given their turns as text (a form's values)."""
    import shutil

    from guard.eval.datasets import read_dataset

    path = tmp_path / "studio.db"
    shutil.copy(Path(__file__).resolve().parent / "data" / "studio_schema4_4f3e49d.db", path)
    url = f"sqlite:///{path}"
    store = Store(url)
    store.annotate(Annotation("chat-schema4-0001", 5, "eve", True, ["1", "3"], "history", None, "",
                              contradicted_persona=["0"]))
    store.dispose()
    out = tmp_path / "out.jsonl"
    done = _studio("export", "--db", url, "--format", "decode", "-o", str(out))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    ids = [pair for record in records for pair in _turn_ids(record)]
    assert {field for field, _ in ids} == set(TURN_ID_FIELDS)  # every kind of id is in the export
    assert [pair for pair in ids if type(pair[1]) is not int] == []
    [annotated] = [r for r in records if r["record_id"] == "chat-schema4-0001:5"]
    assert annotated["aggregated_contradiction_indices"] == [1, 3, 5] and annotated["persona_evidence"] == [0]
    assert [t["turn_id"] for t in annotated["turns"]] == [0, 1, 2, 3, 4, 5]
    assert len(read_dataset("decode", out)) == len(records) == 5  # guard reads every record back


def test_export_is_read_back_by_guard_evaluate(sqlite_url, tmp_path, flagging_detector):
    store = Store(sqlite_url)
    conversation = _conversation(n_bot_turns=2, flagged_at=2)
    store.save_session(SessionInfo(conversation.record_id, ChatSettings(bot="b", persona=["I have a dog."])))
    store.save_turns(conversation.record_id, conversation.turns, {0: "typed", 2: "perturb_negation"})
    store.annotate(Annotation(conversation.record_id, 3, "a", True, [1], "history", True))
    store.annotate(Annotation(conversation.record_id, 1, "a", False))
    out = tmp_path / "out.jsonl"
    done = _studio("export", "--db", sqlite_url, "--format", "decode", "-o", str(out), "--annotated-only")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["is_contradiction"] for r in records] == [False, True]
    assert records[1]["aggregated_contradiction_indices"] == [1, 3]
    assert records[1]["meta"]["kind"] == "perturb_negation" and records[1]["annotations"][0]["annotator"] == "a"
    from guard.eval.datasets import read_dataset

    dialogues = read_dataset("decode", out)
    assert dialogues[1].evidence == [1] and dialogues[1].category == "history"
    evaluated = subprocess.run([sys.executable, "-m", "guard", "evaluate", "--format", "decode", str(out),
                                "--detector", str(flagging_detector), "--json", "-q"], cwd=REPO, capture_output=True,
                               text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(evaluated.stdout)["overall"]["n"] == 2


def test_transcripts_import_chat_download_and_playground_text(sqlite_url):
    from studio.transcripts import TranscriptError, import_transcript, read_transcripts

    store = Store(sqlite_url)
    conversation = _conversation()
    [chat] = read_transcripts(json.dumps(conversation.to_decode_record()).encode(), "chat.json")
    session_id = import_transcript(store, chat)
    loaded = store.load_session(session_id)
    assert loaded.info.source == "import" and loaded.info.persona == ["I have a dog."]
    assert loaded.turns[3].turn.report == conversation.turns[3].report
    [playground] = read_transcripts("A: Do you have pets?\nB: I have a dog.\nA: Really?\nB: I never had one.",
                                    "dialogue.txt")
    assert [t.agent_id for t in playground.turns] == ["user", "bot", "user", "bot"]
    before = store.counts()
    for bad, message in [(b"\xff\xfe\x00garbage", "not UTF-8"), (b'{"turns": [', "not valid JSON"),
                         (b"A: one\nB: two\nC: three", "3 speakers"), (b"", "empty"),
                         (b'{"turns": [{"agent_id": "user", "text": ""}]}', "non-empty text")]:
        with pytest.raises(TranscriptError, match=message):
            read_transcripts(bad, "bad.json")
    assert store.counts() == before


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_bytes(b"\xff\xfe\x00garbage\n")
    cases = [
        ("export", "--db", "postgresql+psycopg://u:pw@127.0.0.1:1/x", "-o", str(tmp_path / "o.jsonl")),
        ("import", str(broken), "--db", f"sqlite:///{tmp_path / 'i.db'}"),
        ("redteam", "--bot", "embedded", "--sessions", "0", "--turns", "1", "--guard", "rerank"),
        ("redteam", "--bot", "embedded", "--sessions", "1", "--turns", "1", "--guard", "rerank", "--methods", "yell"),
    ]
    for args in cases:
        done = _studio(*args)
        assert done.returncode == 2, (args, done.stderr)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error:"), (args, done.stderr)
    assert not (tmp_path / "o.jsonl").exists()


SCRIPT = {"replies": [[{"text": "I have a dog named Max. I live in Ohio.", "score": -0.4}],
                      [{"text": "I have never had a dog.", "score": -0.2},
                       {"text": "Max loves long walks in the park.", "score": -0.9}]]}


def test_redteam_self_play_with_the_scripted_bot(tmp_path, flagging_detector):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    url = f"sqlite:///{tmp_path / 'rt.db'}"
    sample = tmp_path / "sample.jsonl"
    done = _studio("redteam", "--bot", "scripted", "--script", str(script), "--sessions", "2", "--turns", "2",
                   "--guard", "flag", "--methods", "inquire_bot", "short", "--db", url, "--json",
                   "--detector", str(flagging_detector), "--judge", f"{flagging_detector}:unstructured",
                   "--sample", "3", "--sample-out", str(sample), "-q")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["sessions"] == 2 and report["bot_replies"] == 4
    assert report["judge"].endswith(":unstructured") and "guard's own detector" in report["guard_judge"]
    methods = {row["method"] for row in report["per_method"]}
    assert methods <= {"inquire_bot", "short", "opener"} and "opener" in methods
    # τ = 0.1 on a random model flags the second reply's candidates; flag mode sends them anyway
    assert all(0.0 <= row["judge_rate"] <= 1.0 for row in report["per_method"])
    # the share of a method's messages that led to a contradiction: the guard or either judge said so
    for row in report["per_method"]:
        assert max(row["guard_flag_rate"], row["guard_judge_rate"], row["judge_rate"]) <= \
            row["contradiction_share"] <= 1.0
    store = Store(url)
    # every stored bot turn records the bot that produced it (issue 19 item 2)
    for info in store.list_sessions(source="redteam"):
        session = store.load_session(info.id)
        assert {t.turn.settings.bot for t in session.turns if t.turn.agent_id == "bot"} == {"scripted"}
    assert store.counts()["turns"] == 2 * 4 and store.counts()["suggestions"] >= 2
    assert len(sample.read_text().splitlines()) == 3


def test_redteam_interrupted_keeps_what_was_done(sqlite_url):
    from fake_nli import ScriptedScorer

    from bots.base import Bot, Candidate
    from guard.config import GuardConfig
    from guard.judge.pipeline import Guard
    from studio.redteam import Judge, RedteamSettings, run_redteam

    class TiredBot(Bot):
        name = "tired"
        calls = 0

        def generate(self, history, num_candidates, decoding=None, persona=()):
            self.calls += 1
            if self.calls == 3:
                raise KeyboardInterrupt
            return [Candidate("I have a dog named Max.", -0.5)]

    guard = Guard("scripted", ScriptedScorer({}), config=GuardConfig(threshold=0.5))
    store = Store(sqlite_url)
    settings = RedteamSettings(chat=ChatSettings(bot="tired", guard_mode="rerank"), methods=["inquire_bot"],
                               sessions=3, turns=2, use_lm=False)
    judge = Judge("scripted", guard, guard.settings(mode="flag", checks=False))
    run = run_redteam(settings, store, TiredBot(), guard, judge, judge)
    assert run.interrupted and len(run.judgements) == 2
    # session 1's two exchanges are stored; session 2 was interrupted before its first reply
    assert store.counts()["turns"] == 4 and store.counts()["sessions"] == 2


@pytest.mark.parametrize("url, kind", [
    ("sqlite:////srv/class/studio.db", "SQLite"),
    ("postgresql+psycopg://teacher:hunter22@db.school.example:5432/studio", "PostgreSQL"),
    ("postgresql://teacher:hunter22@db.school.example/studio", "PostgreSQL"),
    ("not a url", "unreadable"),
])
def test_what_a_page_may_say_of_the_database_is_its_kind_never_its_address(url, kind):
    from studio.storage import database_kind, safe_url, without_address

    assert database_kind(url) == kind
    message = (f"cannot open the studio database {safe_url(url)}: connection to server at "
               f"\"db.school.example\" failed (url {url}, file /srv/class/studio.db)")
    said = without_address(message, url)
    for secret in ("hunter22", "db.school.example", "/srv/class/studio.db", "teacher:"):
        assert secret not in said or secret not in url, (secret, said)
    if kind != "unreadable":
        assert f"the server's {kind} database" in said
