"""What a student on a class server is shown of the server's paths (ui.class_models.hide_paths, issue 53)."""

from __future__ import annotations

import pytest

from ui import class_models


@pytest.mark.parametrize("text, shown", [
    ("cannot load NLI checkpoint '/etc' as a local folder",
     f"cannot load NLI checkpoint '{class_models.HIDDEN_PATH}' as a local folder"),
    ("cannot load NLI checkpoint '/srv/class/models/nli' as a local folder",
     f"cannot load NLI checkpoint '{class_models.HIDDEN_PATH}' as a local folder"),
    ("No such file: /tmp/x/teachers-detector/config.json", f"No such file: {class_models.HIDDEN_PATH}"),
    ("read ~/.cache/consistency-guard/bot failed", f"read {class_models.HIDDEN_PATH} failed"),
    (r"C:\Users\t\models\nli is missing", f"{class_models.HIDDEN_PATH} is missing"),
    ("the server at http://127.0.0.1:8001/v1/chat did not answer", "the server at http://127.0.0.1:8001/v1/chat did "
                                                                    "not answer"),
    ("τ = 0.5 and 3/4 of the candidates", "τ = 0.5 and 3/4 of the candidates"),
])
def test_a_student_is_shown_no_server_path(monkeypatch, text, shown):
    monkeypatch.setattr(class_models, "restricted", lambda: True)
    assert class_models.hide_paths(text) == shown
    monkeypatch.setattr(class_models, "restricted", lambda: False)  # the teacher, or one person's machine
    assert class_models.hide_paths(text) == text


def test_a_students_bot_and_detector_are_put_back_within_the_teachers_lists(monkeypatch):
    """A stored session, or a value from before the server had a password, may hold any bot or path: before the
    controls are drawn a student's are put back within GUARD_CLASS_BOTS / GUARD_CLASS_DETECTORS (default: the app's
    default bot and detector); the teacher's, and those on a server without a password, are left alone."""
    monkeypatch.setenv(class_models.BOTS_ENV, "scripted, embedded,no-such-bot")
    monkeypatch.setenv(class_models.DETECTORS_ENV, "embedded,embedded-cascade")
    state = {"chat::bot": "blenderbot", "chat::detector": "/etc"}
    monkeypatch.setattr(class_models, "restricted", lambda: False)
    class_models.keep_within(state)
    assert state == {"chat::bot": "blenderbot", "chat::detector": "/etc"}
    monkeypatch.setattr(class_models, "restricted", lambda: True)
    assert class_models.bots_offered() == ["scripted", "embedded"] and class_models.unknown_bots() == ["no-such-bot"]
    class_models.keep_within(state)
    assert state == {"chat::bot": "scripted", "chat::detector": "embedded"}
    state = {"chat::bot": "embedded", "chat::detector": "embedded-cascade"}  # within the lists: kept
    class_models.keep_within(state)
    assert state == {"chat::bot": "embedded", "chat::detector": "embedded-cascade"}
    monkeypatch.delenv(class_models.BOTS_ENV)
    monkeypatch.delenv(class_models.DETECTORS_ENV)
    monkeypatch.delenv("GUARD_APP_SCRIPT", raising=False)
    monkeypatch.delenv("GUARD_APP_BOT", raising=False)
    monkeypatch.delenv("GUARD_APP_DETECTOR", raising=False)
    assert class_models.allowed_bots() == ["embedded"] and class_models.allowed_detectors() == ["embedded"]
