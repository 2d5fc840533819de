"""Models loaded once per server process (st.cache_resource), with progress while they load.

Settings the tests (and `make run` users) control come from environment variables:

* ``GUARD_APP_BOT``        default bot name (bots.registry; "embedded" = SmolLM2-135M-Instruct)
* ``GUARD_APP_SCRIPT``     a JSON script for the "scripted" bot (bots/scripted.py) instead of its
                           built-in demo; makes "scripted" the default bot
* ``GUARD_APP_DETECTOR``   default detector: "embedded" (models/detector), a local folder or hub name
* ``GUARD_APP_MODE``       default guard mode (off | flag | rerank | penalty | block)
* ``GUARD_APP_CANDIDATES`` default number of candidates
* ``GUARD_APP_PRESET``     default decoding preset (bots.base.PRESETS)
* ``GUARD_ENGINE``         the local bots' inference engine: auto (default: CTranslate2 int8 where it converts
                           the model, else transformers), ctranslate2 or transformers (bots.engines)
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from bots import registry
from bots.base import Bot, BotError
from conversation.records import ChatSettings
from embedded import MissingAssetError
from ui import chat_state

if TYPE_CHECKING:  # loads torch
    from guard.detector import ContradictionDetector
    from guard.nli import NLIScorer

# Errors a user can act on (wrong name, missing package, server down); anything else is a bug and
# propagates so Streamlit shows the traceback.
LOAD_ERRORS = (BotError, MissingAssetError, OSError, ValueError, RuntimeError)
#: Longest error text shown in the red box; the rest is one click away.
SHORT_ERROR = 180


def default_script() -> str | None:
    """The scripted bot's script file (``GUARD_APP_SCRIPT``), or None for its built-in demo."""
    return os.environ.get("GUARD_APP_SCRIPT") or None


def defaults() -> ChatSettings:
    """The app's default chat settings: the settings record, filled from the environment (module docstring)."""
    from bots.base import PRESETS

    preset = os.environ.get("GUARD_APP_PRESET") or "fast"
    detector = os.environ.get("GUARD_APP_DETECTOR") or "embedded"
    try:
        threshold = round(default_threshold(detector), 4)
    except LOAD_ERRORS:
        threshold = 0.5
    bot = os.environ.get("GUARD_APP_BOT") or ("scripted" if default_script() else "embedded")
    return ChatSettings(
        bot=bot, preset=preset, decoding=asdict(PRESETS[preset]) if preset in PRESETS else {},
        guard_mode=os.environ.get("GUARD_APP_MODE") or "rerank", detector=detector, threshold=threshold,
        num_candidates=int(os.environ.get("GUARD_APP_CANDIDATES") or 4), persona=_default_persona(bot))


def _default_persona(bot: str) -> list[str]:
    """The persona the sidebar starts with: the embedded bot's own (it plays one when given none), so the guard
    checks its replies against who it says it is and the page shows it; other bots start without one."""
    if bot != "embedded":
        return []
    from bots.embedded import EMBEDDED_PERSONA  # light: no model code is imported

    return list(EMBEDDED_PERSONA)


def short_error(exc: BaseException, limit: int = SHORT_ERROR) -> str:
    """The first line of an error, cut at a word boundary (loaders' messages run to many lines)."""
    from bots.base import first_line

    text = first_line(exc)
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def show_error(message: str, detail: str = "") -> None:
    """A short st.error that says what to do; a longer ``detail`` goes under a "Full error" expander."""
    st.error(message, icon="⚠️")
    if detail and detail.strip() not in message:
        with st.expander("Full error"):
            st.code(detail, language=None, wrap_lines=True)


class _ProcessCache:
    """Models loaded once per server process, each key loaded by one thread while others wait for it.

    Not ``st.cache_resource``: the start-up warm-up (``start_warm_up``) fills it from a thread of its own, outside
    any page run, and a page that asks for a model the warm-up is still loading waits for that load instead of
    starting a second one (a conversion twice on a 2-core CPU)."""

    def __init__(self) -> None:
        self._values: dict = {}
        self._locks: dict = {}
        self._guard = threading.Lock()

    def get(self, key, load):
        with self._guard:
            if key in self._values:
                return self._values[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._values:
                self._values[key] = load()
            return self._values[key]

    def has(self, key) -> bool:
        return key in self._values


_models = _ProcessCache()

#: where ``python -m bots`` runs from (the app's checkout)
REPO_ROOT = Path(__file__).resolve().parents[1]

#: the page modules and the libraries they draw with, imported by one thread at a time (``import_page_modules``)
PAGE_MODULES = ("pandas", "altair", "narwhals.stable.v1", "narwhals.stable.v2", "ui.charts", "ui.widgets",
                "ui.turn_widgets")
_IMPORT_LOCK = threading.Lock()


def import_page_modules() -> None:
    """Import what the pages draw with, one thread at a time. Several tabs opening at once on a fresh server run
    their first page in parallel threads, and two threads importing a package and its submodule (Altair's narwhals)
    each wait for the other's module lock; Python breaks that cycle by handing one of them a half-initialized module,
    and that tab shows an ImportError ("cannot import name ... from ui.turn_widgets") instead of the chat. Once
    imported, this costs a lock and a dictionary look-up per run."""
    import importlib

    with _IMPORT_LOCK:
        for name in PAGE_MODULES:
            importlib.import_module(name)


#: bots that run no local model: nothing to convert, no engine to pick
_NO_LOCAL_MODEL = ("scripted", "remote")
#: what a local bot's first load on the default engine does, said while it loads
_CONVERTS_ONCE = "its first use on this machine converts it to CTranslate2 int8 once"


def _bot_key(name: str, engine: str) -> tuple:
    """The bot's key in this process's model cache, shared by every page and the start-up warm-up."""
    return ("bot", name, default_script() if name == "scripted" else None, engine)


def _bot(name: str, engine: str = "auto", convert_apart: bool = False):
    """The bot, loaded once per process. ``convert_apart``: have ``python -m bots prepare`` convert it first, in a
    process of its own (``_convert_bot_apart``)."""
    key = _bot_key(name, engine)

    def load():
        if convert_apart:
            _convert_bot_apart(name)
        if name == "scripted":
            return registry.make_bot(name, script=default_script())
        return registry.make_bot(name, **({"engine": engine} if engine != "auto" else {}))

    return _models.get(key, load)


def _scorer(name: str):
    from guard.loading import load_scorer

    return _models.get(("scorer", name), lambda: load_scorer(name))


def _embedder():
    from guard.loading import load_embedder

    return _models.get(("embedder",), load_embedder)


@dataclass
class WarmUp:
    """The start-up warm-up's progress: what it is loading now, what is done, what failed (one line each)."""

    running: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    finished: bool = False

    @property
    def stage(self) -> str:
        return " and ".join(self.running) or "the models"

    def run(self, label: str, load) -> None:
        self.running.append(label)
        try:
            load()
            self.done.append(label)
        except Exception as exc:  # noqa: BLE001 - the page loads it again and shows the error where it is used
            self.failed.append(f"{label}: {short_error(exc)}")
        finally:
            self.running.remove(label)


def _convert_bot_apart(name: str) -> None:
    """Have ``python -m bots prepare`` load the bot once in a process of its own, which converts it on a new machine
    (about 25 s for the embedded bot, mostly Python: de-quantizing its GGUF, then CTranslate2 int8) and caches the
    result. Apart, that work has the second core to itself instead of sharing this process's interpreter lock with
    the detector, spaCy and the page; on a filled cache it takes a fraction of a second. Whatever goes wrong there
    is left to the in-process load that follows, which shows it where the bot is used."""
    if name in _NO_LOCAL_MODEL:
        return
    try:
        subprocess.run([sys.executable, "-m", "bots", "prepare", "--bot", name], cwd=REPO_ROOT, capture_output=True,
                       timeout=900, check=False)
    except (OSError, subprocess.SubprocessError):
        pass


@st.cache_resource(show_spinner=False)
def start_warm_up(bot: str, detector: str) -> WarmUp:
    """Load (and on a new machine convert) the default bot, detector and embedder in background threads, once per
    server process, as soon as the first page is served: the first reply does not pay for them. The bot converts in
    a process of its own while the detector and the embedder load here."""
    progress = WarmUp()
    bot_label = f"the bot '{bot}' ({_CONVERTS_ONCE})"

    def load_guard() -> None:
        progress.run(f"the detector '{detector}'", lambda: _scorer(detector))
        progress.run("the sentence embedder", _embedder)

    def run() -> None:
        # under the key the page's own get_bot uses: a message sent meanwhile waits for this load, not a second one
        bot_thread = threading.Thread(target=progress.run, args=(bot_label, lambda: _bot(bot, convert_apart=True)),
                                      name="model-warm-up-bot", daemon=True)
        bot_thread.start()
        load_guard()
        bot_thread.join()
        progress.finished = True

    threading.Thread(target=run, name="model-warm-up", daemon=True).start()
    return progress


def warm_up_status(settings: ChatSettings) -> None:
    """While the start-up warm-up runs: one line saying what is being prepared (the chat input works meanwhile;
    a message sent now waits for the model it needs)."""
    app_defaults = defaults()
    progress = start_warm_up(app_defaults.bot, app_defaults.detector)
    slot = st.empty()  # there in every run, so the turns below keep their places when the warm-up ends
    if progress.finished:
        return
    # no clock here: the line is drawn once per run, and a count of seconds would stand still between runs
    slot.info(f"Preparing {progress.stage} in the background. You can type: the first reply waits for it.", icon="⏳")


@st.cache_resource(show_spinner=False)
def model_lock(kind: str, name: str) -> threading.Lock:
    """One lock per loaded model: sessions take turns on the 2-core CPU instead of thrashing it."""
    return threading.Lock()


def _with_status(key: tuple, label: str, loader):
    """Call ``loader()``; while its model is not loaded in this process yet (by a page or the start-up
    warm-up), inside an st.status box with timing."""
    if _models.has(key):
        return loader()
    with st.status(label, expanded=False) as status:
        started = time.perf_counter()
        try:
            value = loader()
        except LOAD_ERRORS:
            status.update(label=f"{label} failed", state="error")
            raise
        status.update(label=f"{label} done in {time.perf_counter() - started:.1f} s", state="complete")
    return value


def get_bot(name: str, engine: str = "auto", kept: str = "") -> Bot | None:
    """The bot, or None after an st.error that says what to do. ``engine`` (local bots): auto, ctranslate2 or
    transformers; the first load of a bot on CTranslate2 converts it once (about 20 s) and says so. ``kept``:
    what the calling page keeps meanwhile, said in the error ("the conversation is kept")."""
    try:
        label = f"Loading bot '{name}'…"
        if name not in _NO_LOCAL_MODEL and engine != "transformers":
            label = f"Loading bot '{name}' ({_CONVERTS_ONCE})…"
        return _with_status(_bot_key(name, engine), label, lambda: _bot(name, engine))
    except LOAD_ERRORS as exc:
        show_error(f"Could not load the bot '{name}': {short_error(exc)}. Pick another bot in the "
                   f"sidebar{_kept(kept)}.", str(exc))
        return None


def loaded_bot(name: str, engine: str = "auto") -> Bot | None:
    """The bot if this process has already loaded it, else None (the goading assistant never loads a model)."""
    if not _models.has(_bot_key(name, engine)):
        return None
    return _bot(name, engine)


def engine_caption(name: str, engine: str = "auto") -> None:
    """One sidebar caption saying what runs the bot: its engine once loaded, else what will be chosen."""
    bot = loaded_bot(name, engine)
    if bot is not None:
        if bot.engine_label:
            st.caption(f"Engine: {bot.engine_label}")
    elif name not in _NO_LOCAL_MODEL:
        st.caption("Engine: CTranslate2 int8 where it converts the model, else transformers (loads on the first reply)"
                   if engine == "auto" else f"Engine: {engine} (loads on the first reply)")


def _kept(kept: str) -> str:
    return f" ({kept})" if kept else ""


def get_scorer(name: str, kept: str = "") -> NLIScorer | None:
    """The NLI scorer, or None after an st.error that says what to do (and what the page keeps: ``kept``)."""
    try:
        return _with_status(("scorer", name), f"Loading detector '{name}'…", lambda: _scorer(name))
    except LOAD_ERRORS as exc:
        show_error(f"Could not load the detector '{name}': {detector_problem(name, exc)}. "
                   "Type 'embedded' in the sidebar's Detector box, or the path of a local checkpoint folder"
                   f"{_kept(kept)}.", str(exc))
        return None


def detector_problem(name: str, exc: BaseException) -> str:
    """Why a detector name did not load, in a few words."""
    from guard.loading import EMBEDDED_DETECTORS

    if name not in EMBEDDED_DETECTORS and not Path(name).expanduser().exists():
        return "no such folder, and no downloaded model of that name (the app runs offline)"
    return short_error(exc)


def get_embedder():
    """The prefilter embedder, or None (the detector then pairs every earlier turn) with a warning."""
    try:
        return _with_status(("embedder",), "Loading the sentence embedder…", _embedder)
    except LOAD_ERRORS as exc:
        st.warning(f"Prefilter off: the sentence embedder did not load ({short_error(exc)}).", icon="ℹ️")
        return None


def default_threshold(name: str) -> float:
    """The detector's calibrated τ (its guard_config.json), or DECODE's 0.5 for a checkpoint without one.

    A broken guard_config.json raises guard.loading.ModelLoadError: its τ is unknown, and 0.5 in its place
    would judge with a threshold nobody chose.
    """
    from guard.loading import default_threshold as threshold_of

    return float(threshold_of(name))


@st.cache_resource(show_spinner=False, max_entries=32)
def _detector(name: str, threshold: float, method: str, prefilter_k: int | None, _scorer, _embedder):
    """Detectors are cached too: each keeps its embedding cache across turns and sessions."""
    from guard.detector import ContradictionDetector

    return ContradictionDetector(_scorer, method=method, threshold=threshold, embedder=_embedder,
                                 prefilter_k=prefilter_k if _embedder is not None else None)


def make_detectors(name: str, threshold: float, methods: tuple[str, ...] = ("structured",),
                   prefilter_k: int | None = None, kept: str = "") -> dict[str, ContradictionDetector] | None:
    """ContradictionDetectors over one cached scorer, one per method, or None after one st.error
    (a page that needs several methods loads the scorer once, so a bad name is reported once)."""
    scorer = get_scorer(name, kept)
    if scorer is None:
        return None
    embedder = get_embedder() if prefilter_k else None
    try:
        return {method: _detector(name, round(float(threshold), 4), method,
                                  prefilter_k if embedder is not None else None, scorer, embedder)
                for method in methods}
    except LOAD_ERRORS as exc:
        show_error(f"Could not set up the detector '{name}': {short_error(exc)}. Pick another detector or threshold "
                   "in the sidebar.", str(exc))
        return None


def make_detector(name: str, threshold: float, method: str = "structured",
                  prefilter_k: int | None = None, kept: str = "") -> ContradictionDetector | None:
    """A ContradictionDetector over the cached scorer, or None after an st.error (saying what is ``kept``)."""
    detectors = make_detectors(name, threshold, (method,), prefilter_k, kept)
    return None if detectors is None else detectors[method]


def presentation_toggle() -> bool:
    """The sidebar's presentation-mode toggle (kept in the session): large type and high-contrast
    highlights for a projector; the sidebar starts collapsed. Rendered by app.py on every page."""
    from ui.render import PRESENTATION_CSS

    on = st.sidebar.toggle("Presentation mode", key="presentation",
                           help="For a projector: large type, high-contrast highlights and badges, "
                                "sidebar collapsed (open it with the arrow at the top left).")
    if on:
        st.html(PRESENTATION_CSS)
    return on


def current_settings() -> ChatSettings:
    """The chat settings this browser session holds (``ui.chat_state``), the app's defaults for the rest."""
    return chat_state.read_settings(st.session_state, defaults())


def _detector_changed() -> None:
    """A new detector name: τ goes to that detector's calibrated value (another detector's τ means nothing)."""
    name = (st.session_state.get(chat_state.key("detector")) or "").strip() or "embedded"
    try:
        st.session_state[chat_state.key("threshold")] = round(default_threshold(name), 4)
    except LOAD_ERRORS:
        pass  # the sidebar says why under the box


#: set while the run that refilled an empty detector box is repeated
_REFILLED_KEY = "chat_view_refilled_detector"


def sidebar_detector_settings() -> tuple[str, float]:
    """Detector name and threshold, shared by every page (rendered by app.py before the page); they live in the
    chat settings (``chat::detector``, ``chat::threshold``)."""
    app_defaults = defaults()
    chat_state.ensure_defaults(app_defaults, st.session_state)
    detector_key = chat_state.key("detector")
    if not str(st.session_state.get(detector_key) or "").strip():
        # an empty box means the default; it also comes back empty when the first run of a new tab is cut short
        # by a click on another page (Streamlit then takes the half-drawn box's value, "")
        st.session_state[detector_key] = app_defaults.detector
    typed = st.sidebar.text_input(
        "Detector", key=detector_key, on_change=_detector_changed,
        help="'embedded' = the project's fast MiniLM checkpoint (models/detector); 'embedded-cascade' = MiniLM on "
             "every pair and the larger mpnet detector on the suspicious ones (docs/detector.md); or a local "
             "checkpoint folder or a hub name already in the local cache (the app runs offline). Empty = the default.",
    )
    if not typed.strip() and not st.session_state.get(_REFILLED_KEY):
        st.session_state[_REFILLED_KEY] = True  # once: a browser that keeps sending "" cannot loop
        del st.session_state[detector_key]
        st.rerun()  # the box is drawn again with the default, and the page reads it
    st.session_state[_REFILLED_KEY] = False
    name = typed.strip() or app_defaults.detector
    try:
        default = default_threshold(name)
    except LOAD_ERRORS as exc:
        from guard.loading import FALLBACK_THRESHOLD

        with st.sidebar:
            show_error(f"The detector '{name}' has no usable threshold: {short_error(exc)}. Fix its guard_config.json "
                       f"or type another detector; the slider starts at {FALLBACK_THRESHOLD} meanwhile, which is not "
                       "calibrated for it.", str(exc))
        default = FALLBACK_THRESHOLD
    low, high = chat_state.THRESHOLD_RANGE
    tau_key = chat_state.key("threshold")
    if st.session_state.get(tau_key) is None or not low <= float(st.session_state[tau_key]) <= high:
        st.session_state[tau_key] = round(default, 4)
    st.session_state[tau_key] = round(float(st.session_state[tau_key]), 4)
    threshold = st.sidebar.select_slider(
        "Contradiction threshold τ", options=chat_state.tau_options(default, st.session_state[tau_key]),
        format_func=chat_state.tau_label, key=tau_key,
        help=f"A pair scoring at least τ is evidence of a contradiction. Default for this detector: {default:.4f}.",
    )
    st.sidebar.caption(operating_point_caption(name, float(threshold)))
    return name, float(threshold)


def operating_point_caption(name: str, threshold: float) -> str:
    """One line saying which operating point τ is: the calibrated one (and what it was set for) or a custom one."""
    from guard.loading import operating_point

    try:
        point = operating_point(name)
    except LOAD_ERRORS:
        point = None
    if point is None:
        return "Operating point: not recorded for this detector (τ is not calibrated by a stated rule)."
    if abs(threshold - round(point.threshold, 4)) > 1e-9:
        return (f"Operating point: custom τ = {threshold:.4f} (calibrated τ = {point.threshold:.4f}); its "
                "false-alarm rate and recall are not measured.")
    if point.rule == "bot-stream false-alarm" and point.false_alarm_target is not None:
        text = (f"Operating point: false alarms ≤ {point.false_alarm_target:.0%} of consistent real bot turns "
                f"(τ = {point.threshold:.4f}")
        if point.recall is not None:
            text += f"; catches {point.recall:.0%} of the labelled bot-turn contradictions it was set on"
        return text + ")."
    if point.rule == "false-alarm" and point.false_alarm_target is not None:
        text = (f"Operating point: false alarms ≤ {point.false_alarm_target:.0%} of consistent dialogues "
                f"(τ = {point.threshold:.4f}")
        if point.recall is not None:
            text += f"; catches {point.recall:.0%} of DECODE dev contradiction dialogues"
        return text + ")."
    return f"Operating point: τ = {point.threshold:.4f}, the accuracy-best τ on DECODE dev's balanced pairs."
