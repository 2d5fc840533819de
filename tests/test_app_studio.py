"""The goading studio in the app through Streamlit's AppTest: suggestions, annotations, resume, errors, review.

The bot is the scripted bot, the detector a tiny random NLI model with τ = 0.1 (it flags every
candidate), and the database a fresh SQLite file per test.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import APP, html_tables, open_panels, say, start_scripted_app

from studio.storage import Store, forget_store

streamlit_testing = pytest.importorskip("streamlit.testing.v1")
AppTest = streamlit_testing.AppTest

SCRIPT = {"replies": [
    [{"text": "I have a dog named Max. I live in Ohio.", "score": -0.4}],
    [{"text": "I have never had a dog.", "score": -0.2}, {"text": "Max loves long walks in the park.", "score": -0.9}],
]}


@pytest.fixture()
def db_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'studio.db'}"
    monkeypatch.setenv("GUARD_STUDIO_DB", url)
    yield url
    forget_store(url)


def _app(monkeypatch, tmp_path, detector: Path, mode: str = "flag") -> AppTest:
    return start_scripted_app(monkeypatch, tmp_path, detector, mode, SCRIPT)


def _suggestion_buttons(at: AppTest):
    return [b for b in at.button if b.key and "::send::" in b.key]


def _same_browser(at: AppTest) -> AppTest:
    """A new tab (or a reload) of the browser that ran ``at``: it sends the same cookie, so its token is the same
    (AppTest has no cookies; the token is put where ui.ownership keeps what the cookie said)."""
    from ui.ownership import TOKEN_KEY

    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.session_state[TOKEN_KEY] = at.session_state[TOKEN_KEY]
    return fresh


def _shown(label: str) -> str:
    """A button label as it reads (Markdown escapes undone): the suggestion's own text."""
    return re.sub(r"\\(.)", r"\1", label)


def test_suggestion_click_sends_and_is_stored(monkeypatch, tmp_path, flagging_detector, db_url):
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    buttons = _suggestion_buttons(at)
    assert 3 <= len(buttons) <= 5
    assert any("template ranking" in c.value for c in at.caption)  # the scripted bot has no LM for FQness
    first = buttons[0]
    first.click().run()
    assert not at.exception, at.exception
    conversation = at.session_state["chat::conversation"]
    assert [t.agent_id for t in conversation.turns] == ["user", "bot", "user", "bot"]
    assert conversation.turns[2].text == _shown(first.label)
    assert at.query_params["session"] in (conversation.record_id, [conversation.record_id])
    store = Store(db_url)
    stored = store.load_session(conversation.record_id)
    assert len(stored.turns) == 4 and stored.methods[0] == "typed" and stored.methods[2] != "typed"
    used = [s for s in store.suggestions(conversation.record_id) if s["used"]]
    assert len(used) == 1 and used[0]["used_turn_index"] == 2 and used[0]["text"] == _shown(first.label)


def test_edit_a_suggestion_then_send(monkeypatch, tmp_path, flagging_detector, db_url):
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    [edit] = [b for b in at.button if b.key and b.key.endswith("::edit::0")]
    edit.click().run()
    box = at.text_input(key="suggestions::edit")
    assert box.value == _shown(_suggestion_buttons(at)[0].label)
    box.set_value(box.value + " Tell me!").run()
    [send] = [b for b in at.button if b.key == "suggestions::send_edit"]
    send.click().run()
    assert not at.exception, at.exception
    conversation = at.session_state["chat::conversation"]
    assert conversation.turns[2].text.endswith("Tell me!") and len(conversation.turns) == 4
    used = [s for s in Store(db_url).suggestions(conversation.record_id) if s["used"]]
    assert used and used[0]["edited"]


def test_annotation_is_saved_and_session_resumes_from_the_url(monkeypatch, tmp_path, flagging_detector, db_url):
    at = _app(monkeypatch, tmp_path, flagging_detector)
    at.text_input(key="studio_name").set_value("teacher").run()
    say(at, "Do you have any pets?")
    say(at, "Tell me about your pets")
    record_id = at.session_state["chat::conversation"].record_id
    key = f"ann::{record_id}::3"
    open_panels(at, annotations=True)
    at.radio(key=f"{key}::yes").set_value("yes").run()
    at.multiselect(key=f"{key}::turns").set_value([1]).run()
    at.radio(key=f"{key}::right").set_value("yes").run()
    [save] = [b for b in at.button if b.key == f"{key}::save"]
    save.click().run()
    assert not at.exception, at.exception
    [annotation] = Store(db_url).annotations(record_id)
    assert (annotation.annotator, annotation.contradiction, annotation.contradicted_turns, annotation.category,
            annotation.guard_right) == ("teacher", True, [1], "history", True)
    # a new browser session of the same browser (refresh, or a server restart) with ?session=ID gets the
    # conversation back
    fresh = _same_browser(at)
    fresh.query_params["session"] = record_id
    fresh.run()
    assert not fresh.exception, fresh.exception
    resumed = fresh.session_state["chat::conversation"]
    assert resumed.record_id == record_id and [t.text for t in resumed.turns] == \
           [t.text for t in at.session_state["chat::conversation"].turns]
    assert resumed.turns[3].report is not None and resumed.turns[3].report.candidates


def test_a_broken_server_database_is_one_error_without_its_address_and_the_chat_goes_on(monkeypatch, tmp_path,
                                                                                       flagging_detector, db_url):
    broken = "postgresql+psycopg://u:hunter22@127.0.0.1:1/studio"
    monkeypatch.setenv("GUARD_STUDIO_DB", broken)  # set where the server is started: no page sets it
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    say(at, "Tell me about your pets")
    errors = [e.value for e in at.error if "Goading studio" in e.value]
    assert errors and "the server's PostgreSQL database" in errors[0] and "GUARD_STUDIO_DB" in errors[0]
    for part in ("hunter22", "127.0.0.1", "postgresql+psycopg", "/studio"):
        assert part not in _texts(at), part
    assert len(at.session_state["chat::conversation"].turns) == 4  # nothing lost in the tab
    # the server restarted on a working database: the turns written meanwhile are stored too
    monkeypatch.setenv("GUARD_STUDIO_DB", db_url)
    at.run()
    assert not at.exception
    assert len(Store(db_url).load_session(at.session_state["chat::conversation"].record_id).turns) == 4


def test_no_page_sets_or_shows_the_database(monkeypatch, tmp_path, flagging_detector, db_url):
    """The database is the server's: no input on any page names it, no page shows its address; the signed-in teacher
    sees its kind on Review."""
    monkeypatch.setenv("GUARD_TEACHER_PASSWORD", "owl-42")
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    path = db_url.removeprefix("sqlite:///")
    for page in ("pages/guarded_chat.py", "pages/playground.py", "pages/learn.py", "pages/review.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        labels = [w.label for w in [*at.text_input, *at.text_area]]
        assert not [label for label in labels if re.search(r"database|url", label, re.I)], (page, labels)
        assert path not in _texts(at) and "sqlite" not in _texts(at).lower(), page
    assert not any("SQLite" in c.value for c in at.caption)  # a student is not told even the kind
    at.text_input(key="owner::password").set_value("owl-42")
    [sign_in] = [b for b in at.button if b.label == "Sign in"]
    sign_in.click().run()
    assert any("the server's SQLite database" in c.value for c in at.caption)
    assert path not in _texts(at)


def test_the_database_comes_from_streamlit_secrets_when_the_environment_names_none(monkeypatch, tmp_path,
                                                                                   flagging_detector):
    from ui.studio_store import SECRET_NAME

    from_secrets = f"sqlite:///{tmp_path / 'from-secrets.db'}"
    monkeypatch.delenv("GUARD_STUDIO_DB")
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT))
    for name, value in {"GUARD_APP_SCRIPT": str(path), "GUARD_APP_DETECTOR": str(flagging_detector),
                        "GUARD_APP_MODE": "flag", "GUARD_APP_REMIND": "0"}.items():
        monkeypatch.setenv(name, value)
    at = AppTest.from_file(APP, default_timeout=120)
    at.secrets[SECRET_NAME] = from_secrets  # .streamlit/secrets.toml, as the server reads it
    at.run()
    say(at, "Do you have any pets?")
    stored = Store(from_secrets).load_session(at.session_state["chat::conversation"].record_id)
    assert stored is not None and len(stored.turns) == 2
    forget_store(from_secrets)


def test_a_database_failure_the_page_works_around_is_said_not_swallowed(monkeypatch, tmp_path, flagging_detector,
                                                                       db_url):
    from studio.storage import StoreError

    def fails(what):
        def method(self, *args, **kwargs):
            raise StoreError(f"{what} failed on {db_url}: disk I/O error")
        return method

    monkeypatch.setattr(Store, "save_suggestions", fails("saving suggestions"))
    monkeypatch.setattr(Store, "annotations", fails("reading annotations"))
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("The suggestions are not saved") and "disk I/O error" in w for w in warnings), warnings
    open_panels(at, annotations=True)  # an annotation box reads the earlier annotations once opened
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("Earlier annotations could not be read") for w in warnings), warnings
    assert 3 <= len(_suggestion_buttons(at)) <= 5  # the suggestions still work
    assert len(at.session_state["chat::conversation"].turns) == 2


def test_review_page_shows_scores_agreement_and_export(monkeypatch, tmp_path, flagging_detector, db_url):
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    say(at, "Tell me about your pets")
    record_id = at.session_state["chat::conversation"].record_id
    from studio.storage import Annotation

    store = Store(db_url)
    store.annotate(Annotation(record_id, 3, "a", True, [1], "history"))
    store.annotate(Annotation(record_id, 3, "b", False))
    store.annotate(Annotation(record_id, 1, "a", False))
    store.annotate(Annotation(record_id, 1, "b", False))
    at.switch_page("pages/review.py").run()
    assert not at.exception, at.exception
    # the scoreboard and the players' table as wrapping HTML (an st.dataframe cut their headers: "share flagg…")
    frames = html_tables(at) + [d.value for d in at.dataframe]
    board = next(f for f in frames if "message before the reply" in f.columns)
    board["bot replies"] = board["bot replies"].astype(int)
    assert board["bot replies"].sum() == 2
    # headers in words, methods by their labels (issue 38: not guard_mode, guard_flag_rate, inquire_bot)
    for frame in frames:
        assert not [c for c in frame.columns if "_" in str(c)], frame.columns
    assert set(board["message before the reply"]) == {"typed by the user"}
    # sent and unsent contradictions counted apart: flag mode sent the flagged reply at turn 3 and at turn 1
    players = next(f for f in frames if "caught by the guard, not sent" in f.columns)
    assert players[["flagged and sent", "caught by the guard, not sent"]].astype(int).values.tolist() == [[2, 0]]
    assert any("kappa" in f.columns for f in frames)
    [download] = at.get("download_button")
    assert "2 records" in download.proto.label
    # one session, four annotations: counted in words ("1 sessions" before)
    assert any(c.value.startswith("1 session · 4 annotations · ") for c in at.caption), [c.value for c in at.caption]


def test_self_play_from_the_review_page(monkeypatch, tmp_path, flagging_detector, db_url):
    at = _app(monkeypatch, tmp_path, flagging_detector)
    at.switch_page("pages/review.py").run()
    assert not at.exception, at.exception
    at.number_input[0].set_value(2)  # sessions
    at.number_input[1].set_value(2)  # bot turns each
    [run] = [b for b in at.button if b.label == "Run self-play"]
    run.click().run()
    assert not at.exception, at.exception
    assert any("4 bot replies in 2 sessions" in s.value for s in at.success)
    sessions = Store(db_url).list_sessions(source="redteam")
    assert len(sessions) == 2 and {s.settings.bot for s in sessions} == {"scripted"}
    from ui.ownership import TOKEN_KEY, owner_key

    assert {s.owner for s in sessions} == {owner_key(at.session_state[TOKEN_KEY])}  # this browser's self-play
    assert any("the second judge flags the reply sent" in d.value.columns for d in at.dataframe)


def test_a_reloaded_session_gets_its_settings_back(monkeypatch, tmp_path, flagging_detector, db_url):
    """Issue 19 item 2: a session played with the scripted bot, another preset, guard mode, candidates and τ
    comes back with those settings in the sidebar after a reload (not the app's defaults, here the embedded
    bot), and neither the session row nor any turn is recorded as another bot's."""
    monkeypatch.setenv("GUARD_APP_BOT", "embedded")  # the app's default differs from what the session used
    at = _app(monkeypatch, tmp_path, flagging_detector, mode="rerank")
    assert at.selectbox(key="chat::bot").value == "embedded"
    detector = str(flagging_detector)
    at.selectbox(key="chat::bot").set_value("scripted")
    at.selectbox(key="chat::preset").set_value("greedy")
    at.number_input(key="chat::num_candidates").set_value(3)
    at.radio(key="chat::guard_mode").set_value("block")
    at.toggle(key="chat::prefilter").set_value(False).run()
    say(at, "Do you have any pets?")
    record_id = at.session_state["chat::conversation"].record_id
    # AppTest resets app.py's sidebar widgets (detector, τ) on reruns, so τ = 0.3 is written as a browser would
    # have saved it (the reply itself was judged at the detector's own τ = 0.1)
    store = Store(db_url)
    info = store.session_info(record_id)
    store.save_session(replace(info, settings=replace(info.settings, threshold=0.3)))
    fresh = _same_browser(at)
    fresh.query_params["session"] = record_id
    fresh.run()
    assert not fresh.exception, fresh.exception
    assert not [w.value for w in fresh.warning if "Session State" in w.value]
    assert fresh.selectbox(key="chat::bot").value == "scripted"
    assert fresh.selectbox(key="chat::preset").value == "greedy"
    assert fresh.number_input(key="chat::num_candidates").value == 3
    assert fresh.radio(key="chat::guard_mode").value == "block"
    assert fresh.toggle(key="chat::prefilter").value is False
    assert fresh.text_input(key="chat::detector").value == detector
    stored = Store(db_url).load_session(record_id)  # the reload wrote nothing: still the scripted bot's settings
    settings = stored.info.settings
    assert (settings.bot, settings.preset, settings.guard_mode, settings.num_candidates, settings.prefilter) == (
        "scripted", "greedy", "block", 3, False)
    assert settings.threshold == pytest.approx(0.3)
    made = stored.turns[1].turn.settings
    assert (made.bot, made.preset, made.guard_mode, made.num_candidates, made.prefilter, made.from_session) == (
        "scripted", "greedy", "block", 3, False, False)
    # nobody moved τ for that turn: its settings carry none, and its report the detector's own it was judged at
    assert made.decoding["method"] == "greedy" and made.threshold is None
    assert stored.turns[1].turn.report.threshold == pytest.approx(0.1)
    assert made.detector == detector
    assert fresh.select_slider(key="chat_view::tau").value == pytest.approx(0.3)
    # the next reply in the reloaded tab is the scripted bot's too
    say(fresh, "Tell me about your pets")
    again = Store(db_url).load_session(record_id)
    assert [t.turn.settings.bot for t in again.turns if t.turn.agent_id == "bot"] == ["scripted", "scripted"]


def test_suggestion_labels_escape_markdown_and_send_the_raw_text(monkeypatch, tmp_path, flagging_detector, db_url):
    """Issue 19 item 3: a suggestion quoting Markdown the user typed is labelled with it escaped (it renders as
    typed, not bold or as a link) and sends the raw text."""
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "I love **cats** and _dogs_ [really](x).")
    [button] = [b for b in _suggestion_buttons(at) if b.label.startswith("What I'm saying is")]
    assert button.label == r"What I'm saying is, I love \*\*cats\*\* and \_dogs\_ \[really\]\(x\)\."
    button.click().run()
    assert at.session_state["chat::conversation"].turns[2].text == "What I'm saying is, I love **cats** and _dogs_ [really](x)."


# ---------------------------------------------------------------- sessions belong to their browser (issue 38)
def _texts(at: AppTest) -> str:
    """Everything the page shows as text: markdown, captions, HTML blocks, alerts."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [h.proto.body for h in at.html]
    parts += [a.value for kind in ("warning", "error", "info", "success") for a in at.get(kind)]
    return "\n".join(parts)


def test_another_browsers_link_is_refused_with_a_new_chat_offered(monkeypatch, tmp_path, flagging_detector, db_url):
    mine = _app(monkeypatch, tmp_path, flagging_detector)
    say(mine, "Do you have any pets?")
    record_id = mine.session_state["chat::conversation"].record_id
    assert Store(db_url).session_info(record_id).owner  # the session belongs to the browser that made it
    other = AppTest.from_file(APP, default_timeout=120)  # another browser: no cookie, a token of its own
    other.query_params["session"] = record_id
    other.run()
    assert not other.exception, other.exception
    assert other.session_state["chat::conversation"].turns == []  # neither opened ...
    shown = _texts(other)
    assert "started in another browser" in shown and "I have a dog named Max" not in shown
    assert "Do you have any pets" not in shown
    [new_chat] = [b for b in other.button if b.label == "Start a new chat"]
    new_chat.click().run()
    assert "session" not in other.query_params and "another browser" not in _texts(other)
    say(other, "Hello there")  # ... nor continued: its own message starts its own session
    assert other.session_state["chat::conversation"].record_id != record_id
    assert len(Store(db_url).load_session(record_id).turns) == 2
    # the Review page lists each browser's own sessions only
    other.switch_page("pages/review.py").run()
    assert not other.exception, other.exception
    [sessions] = html_tables(other, "cg-sessions")
    assert sessions["id"].tolist() == [other.session_state["chat::conversation"].record_id]


def test_the_teacher_signs_in_on_review_and_sees_opens_and_exports_everyone(monkeypatch, tmp_path,
                                                                           flagging_detector, db_url):
    from studio.storage import SessionInfo

    monkeypatch.setenv("GUARD_TEACHER_PASSWORD", "owl-42")
    first = _app(monkeypatch, tmp_path, flagging_detector)
    say(first, "Do you have any pets?")
    second = AppTest.from_file(APP, default_timeout=120).run()
    say(second, "Where do you live?")
    Store(db_url).save_session(SessionInfo("cli-session", player="script"))  # the command line's: no browser's
    ids = {a.session_state["chat::conversation"].record_id for a in (first, second)} | {"cli-session"}
    teacher = AppTest.from_file(APP, default_timeout=120).run()
    teacher.switch_page("pages/review.py").run()
    assert not teacher.exception, teacher.exception
    assert not html_tables(teacher, "cg-sessions")  # a browser with no sessions of its own sees none
    teacher.text_input(key="owner::password").set_value("owl")
    [sign_in] = [b for b in teacher.button if b.label == "Sign in"]
    sign_in.click().run()
    assert any("Wrong password" in e.value for e in teacher.error)
    teacher.text_input(key="owner::password").set_value("owl-42")
    [sign_in] = [b for b in teacher.button if b.label == "Sign in"]
    sign_in.click().run()
    assert not teacher.exception, teacher.exception
    assert "owl-42" not in _texts(teacher) and not [t for t in teacher.text_input if t.key == "owner::password"]
    [sessions] = html_tables(teacher, "cg-sessions")
    assert set(sessions["id"]) == ids
    # issue 54: a count is a whole number for every player ("1.0" for the browsers once the command line's player,
    # who has none, made the column a float)
    [players] = html_tables(teacher, "cg-players")
    fastest = dict(zip(players["player"], players["fewest bot replies to a contradiction"]))
    assert fastest.pop("script") == "" and set(fastest.values()) == {"1"}, fastest
    teacher.toggle(key="review_annotated_only").set_value(False).run()
    [download] = teacher.get("download_button")
    assert "2 records" in download.proto.label  # one bot reply in each browser's session
    # the teacher opens the first browser's session on the chat page (the Review page's Open button is clicked in
    # tests/test_browser_owners.py; AppTest runs app.py, which resumes ?session=, on a tab's first run only)
    first_id = first.session_state["chat::conversation"].record_id
    assert teacher.selectbox(key="review_open").options[0].endswith(first_id)
    from ui.ownership import TEACHER_KEY, TOKEN_KEY

    tab = AppTest.from_file(APP, default_timeout=120)
    tab.session_state[TOKEN_KEY], tab.session_state[TEACHER_KEY] = teacher.session_state[TOKEN_KEY], True
    tab.query_params["session"] = first_id
    tab.run()
    assert not tab.exception, tab.exception
    opened = tab.session_state["chat::conversation"]
    assert opened.record_id == first_id and len(opened.turns) == 2
    monkeypatch.delenv("GUARD_TEACHER_PASSWORD")  # a server started without the password has no teacher
    tab = AppTest.from_file(APP, default_timeout=120)
    tab.session_state[TOKEN_KEY], tab.session_state[TEACHER_KEY] = teacher.session_state[TOKEN_KEY], True
    tab.query_params["session"] = first_id
    tab.run()
    assert tab.session_state["chat::conversation"].turns == [] and "another browser" in _texts(tab)


def test_sending_an_edited_message_of_only_spaces_says_so(monkeypatch, tmp_path, flagging_detector, db_url):
    """Issue 38: "Send edited message" with only spaces in the box did nothing and said nothing."""
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    at.text_input(key="suggestions::edit").set_value("   ")
    [send] = [b for b in at.button if b.key == "suggestions::send_edit"]
    send.click().run()
    assert not at.exception, at.exception
    assert any("The edited message is empty" in w.value for w in at.warning)
    assert len(at.session_state["chat::conversation"].turns) == 2  # nothing was sent
    at.run()  # the warning is about that click only
    assert not any("The edited message is empty" in w.value for w in at.warning)


def test_the_annotation_turn_picker_shows_each_turns_first_words(monkeypatch, tmp_path, flagging_detector, db_url):
    """Issue 38: the picker listed "turn 0 … turn 8" without their text."""
    at = _app(monkeypatch, tmp_path, flagging_detector)
    say(at, "Do you have any pets?")
    say(at, "Tell me about your pets")
    open_panels(at, annotations=True)
    record_id = at.session_state["chat::conversation"].record_id
    picker = at.multiselect(key=f"ann::{record_id}::3::turns")
    assert picker.options == ["turn 0: Do you have any pets?", "turn 1: I have a dog named Max. I live…",
                              "turn 2: Tell me about your pets"]
