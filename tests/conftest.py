"""Shared fixtures and helpers: tiny random NLI checkpoints (harness/tiny_nli.py), spaCy and WordNet (skipped when
not provisioned), the studio database of the run, and the app started through Streamlit's AppTest with the
scripted bot.

Tiny models exercise the plumbing (loading, label mapping, batching, evidence bookkeeping); behaviour that
depends on a trained model is tested against the embedded detector and skipped without it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.tiny_nli import build_flagging_detector, build_tiny_nli_model

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# tiny BlenderBot / OPT / Llama folders for the bot tests (tests/tiny_models.py)
from tiny_models import blenderbot_dir, llama_dir, opt_dir, tokenizer  # noqa: E402, F401

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture(scope="session")
def tiny_nli_model_dir(tmp_path_factory) -> Path:
    """A tiny random 3-way (entailment/neutral/contradiction) BERT NLI checkpoint folder."""
    return build_tiny_nli_model(tmp_path_factory.mktemp("tiny_nli3"))


@pytest.fixture(scope="session")
def tiny_nli2_model_dir(tmp_path_factory) -> Path:
    """A tiny random 2-way (non-contradiction/contradiction) checkpoint, labels in reversed order."""
    return build_tiny_nli_model(
        tmp_path_factory.mktemp("tiny_nli2"), id2label={0: "contradiction", 1: "non_contradiction"}, seed=1
    )


@pytest.fixture(scope="session")
def flagging_detector(tmp_path_factory) -> Path:
    """Tiny random 3-way NLI model with τ = 0.1: its ~1/3 contradiction probabilities all fire."""
    return build_flagging_detector(tmp_path_factory.mktemp("flagging_nli"))


def _provisioned(load):
    """What ``load`` returns, or the test is skipped when ``embedded.provision`` has not put the asset there."""
    import embedded

    try:
        return load()
    except embedded.MissingAssetError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def nlp():
    """The shipped spaCy pipeline (embedded.spacy_nlp)."""
    import embedded

    return _provisioned(embedded.spacy_nlp)


@pytest.fixture(scope="session")
def wn():
    """WordNet unpacked by embedded.provision."""
    import embedded

    return _provisioned(embedded.wordnet)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared evaluation data folder (``embedded.shared_data_dir``); tests using it skip without it."""
    from embedded import shared_data_dir

    folder = shared_data_dir()
    if folder is None:
        pytest.skip("needs the shared evaluation data: ../shared/data beside the checkout, or GUARD_SHARED_DATA")
    return folder


@pytest.fixture(autouse=True, scope="session")
def studio_database(tmp_path_factory) -> str:
    """The goading studio's database for the whole test run: a fresh SQLite file, never the user's cache."""
    url = f"sqlite:///{tmp_path_factory.mktemp('studio') / 'studio.db'}"
    os.environ["GUARD_STUDIO_DB"] = url
    return url


def pages_folder_seen_as(patch: pytest.MonkeyPatch, old_style: bool | None) -> None:
    """Streamlit's flag for an old-style ``pages/`` folder as every AppTest run will find it: False (a server after
    its first visit to app.py), None (Streamlit's own check: a fresh server, which finds pages/ and runs its pages
    alone)."""
    from streamlit.runtime.pages_manager import PagesManager

    made = getattr(PagesManager.__init__, "made", PagesManager.__init__)

    def init(self, *args, **kwargs):
        made(self, *args, **kwargs)
        if old_style is not None:
            PagesManager.uses_pages_directory = old_style

    init.made = made
    patch.setattr(PagesManager, "__init__", init)


@pytest.fixture(autouse=True, scope="session")
def app_test_after_the_first_visit():
    """AppTest as a server runs after its first visit to app.py. AppTest resets Streamlit's flag for an old-style
    ``pages/`` folder before every run (``PagesManager.uses_pages_directory = None``), so each run would be a fresh
    server's very first, where Streamlit runs a page of ``pages/`` alone and the page only offers the app
    (``ui.navigation.only_in_the_app``; tests/test_browser_server.py opens a page first on a fresh server, and
    tests/test_app_pages.py's ``fresh_server`` fixture puts AppTest back in that state). Once app.py has called
    ``st.navigation``, a server ignores the folder, as here."""
    with pytest.MonkeyPatch.context() as patch:
        pages_folder_seen_as(patch, False)
        yield


@pytest.fixture
def fresh_server(monkeypatch):
    """AppTest as a freshly started server runs: Streamlit finds pages/ and runs a page alone until app.py ran."""
    pages_folder_seen_as(monkeypatch, None)


def start_scripted_app(monkeypatch, tmp_path: Path, detector: str | Path, mode: str, script: dict,
                       candidates: int = 2, remind: bool = False):
    """The app through AppTest: the scripted bot playing ``script``, ``detector`` at its own τ, ``mode``."""
    from streamlit.testing.v1 import AppTest

    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    monkeypatch.setenv("GUARD_APP_SCRIPT", str(path))
    monkeypatch.setenv("GUARD_APP_DETECTOR", str(detector))
    monkeypatch.setenv("GUARD_APP_MODE", mode)
    monkeypatch.setenv("GUARD_APP_CANDIDATES", str(candidates))
    # the page as the policy alone leaves it (tests/test_conversation_reading.py has the reminders)
    monkeypatch.setenv("GUARD_APP_REMIND", "1" if remind else "0")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    return at


def say(at, text: str):
    """Type ``text`` into the chat input and run the page (no exception allowed)."""
    at.chat_input[0].set_value(text).run()
    assert not at.exception, at.exception
    return at


def open_panels(at, annotations: bool = False):
    """Open every bot turn's candidate panel (``annotations``: its annotation box) and run the page: they draw their
    contents only while open (ui.turn_widgets.show_candidates, ui.annotations.annotation_box)."""
    conversation = at.session_state["chat::conversation"]
    for turn in conversation.turns:
        if turn.report is not None:
            at.session_state[f"ann::{conversation.record_id}::{turn.turn_id}::open" if annotations
                             else f"candidates::{conversation.record_id}::{turn.turn_id}"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def html_tables(at, css_class: str = "cg-table"):
    """The pandas frames of the page's HTML tables (ui.tables.table_html) whose class list holds ``css_class``."""
    from html.parser import HTMLParser

    import pandas as pd

    class Tables(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tables, self.row, self.cell, self.wanted = [], None, None, False

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.wanted = css_class in (dict(attrs).get("class") or "").split()
                if self.wanted:
                    self.tables.append([])
            elif self.wanted and tag == "tr":
                self.row = []
            elif self.wanted and tag in ("td", "th"):
                self.cell = ""
            elif self.wanted and tag == "br" and self.cell is not None:
                self.cell += "\n"

        def handle_endtag(self, tag):
            if not self.wanted:
                return
            if tag in ("td", "th") and self.row is not None:
                self.row.append(self.cell)
                self.cell = None
            elif tag == "tr" and self.row is not None:
                self.tables[-1].append(self.row)
                self.row = None
            elif tag == "table":
                self.wanted = False

        def handle_data(self, data):
            if self.cell is not None:
                self.cell += data

    frames = []
    for element in at.html:
        parser = Tables()
        parser.feed(element.proto.body)
        frames += [pd.DataFrame(t[1:], columns=t[0]) for t in parser.tables if t]
    return frames


@pytest.fixture(scope="module")
def browser():
    """A headless Debian chromium for one test module (harness.server.chromium)."""
    from harness.server import chromium

    with chromium() as running:
        yield running


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """The app server the browser test modules share: one per test process, started on first use (`make test`'s two
    workers start one each; 14 servers a run before, each paying the app's warm-up of 10-20 s of CPU).

    A ``harness.server.SharedApp``: the scripted bot, re-rank, two candidates, reminders off, the embedded detector
    (else a tiny one that flags everything), a teacher's password (``.password``) and a studio database of its own
    (``.db``, ``.db_path``). A module gives its scripted bot's script by the address it opens::

        @pytest.fixture(scope="module")
        def server(app_server):
            return app_server.url(SCRIPT)  # each browser session opened here plays SCRIPT

    ``app_server.url(page="playground")`` is another page (no script needed there). Anything else a session
    changes in its sidebar (guard mode, preset, τ, bot), as a user would. Sessions, sign-ins and the database
    are shared with the modules before: a check counts its own sessions (its own messages, its browser's list). A
    module whose point is a server of its own (an empty cache, no password, another default bot, a fresh process)
    starts it with ``harness.server.streamlit_server`` and ``scripted_app_env``."""
    from harness.server import CHROMIUM, shared_app

    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (make browser)")
    with shared_app(tmp_path_factory.mktemp("app_server")) as app:
        yield app


@pytest.fixture(scope="module")
def module_cache_dir(tmp_path_factory):
    """GUARD_CACHE_DIR pointed at a folder of the module's own (model conversions land there, never in the user's
    cache); a module takes it with ``pytestmark = pytest.mark.usefixtures("module_cache_dir")``."""
    path = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GUARD_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="session")
def embedded_bot():
    """The embedded bot (SmolLM2 on its default engine), loaded once per run; skipped when its model is missing."""
    from bots.base import BotError
    from bots.registry import make_bot

    try:
        return make_bot("embedded")
    except BotError as exc:
        pytest.skip(f"embedded model unavailable: {exc}")
