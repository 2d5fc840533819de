"""What app.py draws in the sidebar of every page: presentation mode, and the detector with its threshold τ (they
live in the chat settings, ``chat::detector`` and ``chat::threshold``, so every page judges with the same ones)."""

from __future__ import annotations

import streamlit as st

from guard.config import BUDGET_RULE, FALLBACK_THRESHOLD, STREAM_RULE, JudgeSettings, OperatingPoint
from guard.models.registry import read_config
from ui import chat_state, class_models
from ui.app_defaults import defaults
from ui.errors import LOAD_ERRORS, short_error, show_error

#: set while the run that refilled an empty detector box is repeated
_REFILLED_KEY = "chat_view_refilled_detector"


def presentation_toggle() -> bool:
    """The sidebar's presentation-mode toggle (kept in the session): large type and high-contrast
    highlights for a projector; the sidebar starts collapsed. Rendered by app.py on every page."""
    from ui.styles import PRESENTATION_CSS

    on = st.sidebar.toggle("Presentation mode", key="presentation",
                           help="For a projector: large type, high-contrast highlights and badges, "
                                "sidebar collapsed (open it with the arrow at the top left).")
    if on:
        st.html(PRESENTATION_CSS)
    return on


def _detector_changed() -> None:
    """A new detector name: τ goes back to that detector's own calibrated value (another detector's τ means
    nothing): the settings carry none, the slider shows the new detector's."""
    st.session_state[chat_state.key("threshold")] = None
    st.session_state.pop(chat_state.TAU_SLIDER_KEY, None)


def sidebar_detector_settings() -> tuple[str, float]:
    """Detector name and threshold, shared by every page (rendered by app.py before the page). The settings get a
    threshold only when the user moves the slider off the detector's calibrated τ; otherwise None, and the guard
    judges with its own value, unrounded."""
    app_defaults = defaults()
    # the values a visit to another page made Streamlit forget (the chat sidebar's persona, mode...) come back, the
    # defaults fill what is missing, and every field is written anew, so each widget is drawn with the session's value:
    # once a run, before any of the widgets (app.py runs this before every page)
    chat_state.restore_missing(st.session_state)
    chat_state.ensure_defaults(app_defaults, st.session_state)
    class_models.keep_within(st.session_state)  # a student on a class server: the teacher's bots and detectors
    detector_key = chat_state.key("detector")
    if not str(st.session_state.get(detector_key) or "").strip():
        # an empty box means the default; it also comes back empty when the first run of a new tab is cut short
        # by a click on another page (Streamlit then takes the half-drawn box's value, "")
        st.session_state[detector_key] = app_defaults.detector
    if class_models.restricted():
        # a student on a class server picks among the teacher's detectors: no box to type a path or a name in
        name = st.sidebar.selectbox(
            "Contradiction detector", class_models.allowed_detectors(), key=detector_key, on_change=_detector_changed,
            format_func=class_models.shown_name,
            help="The program that reads each reply next to what was said before and says how sure it is that they "
                 "clash. The teacher chose the detectors this class may use.")
        return _threshold_controls(str(name))
    typed = st.sidebar.text_input(
        "Contradiction detector", key=detector_key, on_change=_detector_changed,
        help="The program that reads each reply next to what was said before and says how sure it is that they "
             "clash. Leave it empty for the default.\n\nTechnical: 'embedded' = the project's fast MiniLM "
             "checkpoint (models/detector); 'embedded-cascade' = MiniLM on every pair and the larger mpnet detector "
             "on the suspicious ones (docs/detector.md); or a local checkpoint folder or a model name already in the "
             "local cache (the app runs offline).",
    )
    if not typed.strip() and not st.session_state.get(_REFILLED_KEY):
        st.session_state[_REFILLED_KEY] = True  # once: a browser that keeps sending "" cannot loop
        del st.session_state[detector_key]
        st.rerun()  # the box is drawn again with the default, and the page reads it
    st.session_state[_REFILLED_KEY] = False
    return _threshold_controls(typed.strip() or app_defaults.detector)


def _threshold_controls(name: str) -> tuple[str, float]:
    """The τ slider for detector ``name`` and what its default line means; the detector's name and the τ chosen."""
    try:
        config = read_config(name)  # read once a run: τ's default and the operating point below
    except LOAD_ERRORS as exc:
        with st.sidebar:
            show_error(f"The detector '{class_models.shown_name(name)}' has no usable threshold: {short_error(exc)}. "
                       f"Fix its guard_config.json or pick another detector; the slider starts at {FALLBACK_THRESHOLD} "
                       "meanwhile, which is not calibrated for it.", str(exc))
        config = None
    default = FALLBACK_THRESHOLD if config is None else JudgeSettings.resolve(config).threshold
    low, high = chat_state.THRESHOLD_RANGE
    tau_key, chosen_key = chat_state.TAU_SLIDER_KEY, chat_state.key("threshold")
    chosen = st.session_state.get(chosen_key)
    if st.session_state.get(tau_key) is None or not low <= float(st.session_state[tau_key]) <= high:
        st.session_state[tau_key] = round(float(chosen if chosen is not None else default), 4)
    st.session_state[tau_key] = round(float(st.session_state[tau_key]), 4)
    point = None if config is None else config.operating_point
    threshold = st.sidebar.select_slider(
        "How sure the detector must be to flag", options=chat_state.tau_options(default, st.session_state[tau_key]),
        format_func=chat_state.tau_label, key=tau_key,
        help=f"A reply is flagged when the detector is at least this sure that it clashes with something said before "
             f"(1 = certain). This detector's default: {default:.4f}.\n\nTechnical: the contradiction threshold τ; a "
             f"sentence pair scoring at least τ is evidence. "
             + operating_point_caption(point, float(st.session_state[tau_key])),
    )
    st.sidebar.caption(plain_operating_point(point, float(threshold)))
    moved = abs(float(threshold) - round(default, 4)) > 1e-9
    st.session_state[chosen_key] = float(threshold) if moved else None
    return name, float(threshold) if moved else default


def plain_operating_point(point: OperatingPoint | None, threshold: float) -> str:
    """What the line means for a class: how often the default line flags a good reply by mistake and how many real
    contradictions it catches; the measured rule itself is in the slider's help (``operating_point_caption``)."""
    if point is None:
        return "This detector's default line was not set by a measured rule."
    if abs(threshold - round(point.threshold, 4)) > 1e-9:
        return (f"You moved the line from this detector's default ({point.threshold:.4f}): how often it is wrong "
                "there has not been measured.")
    caught = "" if point.recall is None else f"; it catches {point.recall:.0%} of the real contradictions it was set on"
    if point.rule in (STREAM_RULE, BUDGET_RULE) and point.false_alarm_target is not None:
        return (f"At this detector's default line, at most about {point.false_alarm_target:.0%} of consistent bot "
                f"replies in real chats were flagged by mistake{caught}.")
    if point.rule == "false-alarm" and point.false_alarm_target is not None:
        return (f"At this detector's default line, about {point.false_alarm_target:.0%} of consistent conversations "
                f"are flagged by mistake{caught}.")
    return "This detector's default line is the one that was right most often on a test set of sentence pairs."


def operating_point_caption(point: OperatingPoint | None, threshold: float) -> str:
    """One line saying which operating point τ is: the calibrated one (``point``: what it was set for) or a custom
    one."""
    if point is None:
        return "Operating point: not recorded for this detector (τ is not calibrated by a stated rule)."
    if abs(threshold - round(point.threshold, 4)) > 1e-9:
        return (f"Operating point: custom τ = {threshold:.4f} (calibrated τ = {point.threshold:.4f}); its "
                "false-alarm rate and recall are not measured.")
    if point.rule in (STREAM_RULE, BUDGET_RULE) and point.false_alarm_target is not None:
        text = (f"Operating point: false alarms ≤ {point.false_alarm_target:.0%} of consistent real bot turns "
                f"(τ = {point.threshold:.4f}" + ("; τ and the checks set together on the calibration halves of "
                                                 "both dev streams" if point.rule == BUDGET_RULE else ""))
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
