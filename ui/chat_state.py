"""The chat settings in Streamlit's session state: the one to/from pair (``write_settings`` / ``read_settings``).

Every field of ``conversation.records.ChatSettings`` lives under one key, ``chat::<field>``; the sidebar's widgets
use those keys, so what the widgets show *is* the settings record. A field without a widget (the fallback reply)
is kept under its key too, so a new field is stored, restored from a saved session and given to ``guarded_reply``
without another edit here; the decoding values follow the chosen preset. Values a control cannot show (a bot not available on this machine,
a τ off the slider) are left at the control's current value when a stored session is restored.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import asdict, fields
from typing import Any

from bots.base import persona_lines
from conversation.records import ChatSettings
from guard.judge.policies import REPAIR_FALLBACKS
from guard.vocabulary import GUARD_MODES, GuardMode

PREFIX = "chat::"
#: the chat page's view preferences (not settings of a turn), kept across pages like the settings
VIEW_PREFIX = "chat_view::"
#: the threshold slider's own key: it always shows a value, while the settings' ``threshold`` stays None until the
#: user moves it away from the detector's calibrated τ (the guard then judges with its own, unrounded)
TAU_SLIDER_KEY = VIEW_PREFIX + "tau"
THRESHOLD_RANGE = (0.05, 0.99)
#: the τ slider's grid (arrow keys move by one stop); a calibrated τ off the grid is offered as well
TAU_STEP = 0.01
CANDIDATES_RANGE = (1, 10)
LAMBDA_RANGE = (0.0, 5.0)


def key(name: str) -> str:
    """The session-state key of a settings field (and of the widget that shows it)."""
    if name not in ChatSettings.field_names():
        raise KeyError(f"ChatSettings has no field {name!r}")
    return PREFIX + name


def tau_options(*exact: float | None) -> list[float]:
    """The τ slider's stops: every ``TAU_STEP`` across ``THRESHOLD_RANGE`` plus the exact values given (the
    detector's calibrated τ, a restored session's τ), so the arrow keys move by 0.01 and a calibrated τ such as
    0.9315 is offered as it is rather than rounded to a neighbour it was not calibrated at."""
    low, high = THRESHOLD_RANGE
    stops = round((high - low) / TAU_STEP)
    grid = {round(low + i * TAU_STEP, 2) for i in range(stops + 1)}
    extra = {round(float(v), 4) for v in exact if v is not None and low <= float(v) <= high}
    return sorted(grid | extra)


def tau_label(value: float) -> str:
    """A τ stop as the slider shows it: two digits on the grid, four for an exact calibrated value."""
    return f"{value:.2f}" if abs(value - round(value, 2)) < 1e-9 else f"{value:.4f}"


def _persona_text(lines: list[str]) -> str:
    return "\n".join(lines)


#: how a field is kept in the state when its widget needs another form (the persona's text area holds one string)
TO_STATE: dict[str, Callable[[Any], Any]] = {
    "persona": _persona_text,
    "guard_mode": lambda mode: str(mode) if mode else None,
    "repair_fallback": lambda mode: str(mode) if mode else None,
    "threshold": lambda value: None if value is None else round(float(value), 4),
}
FROM_STATE: dict[str, Callable[[Any], Any]] = {
    "persona": lambda text: persona_lines((text or "").splitlines()),  # the box's text: one fact a line
    "guard_mode": lambda mode: GuardMode(mode) if mode else None,
    "repair_fallback": lambda mode: GuardMode(mode) if mode else None,
    "num_candidates": lambda n: None if n is None else int(n),
    "threshold": lambda value: None if value is None else float(value),
    "penalty_lambda": lambda value: None if value is None else float(value),
    "prefilter": lambda value: None if value is None else bool(value),
}


def _offered(name: str, value: Any) -> bool:
    """Whether the sidebar's control for ``name`` can show ``value`` (a stored session may hold others)."""
    if name == "bot":
        from bots import registry

        return value in registry.available_bots()
    if name == "preset":
        from bots.base import PRESETS

        return value in PRESETS
    if name == "guard_mode":
        return value in GUARD_MODES
    if name == "repair_fallback":
        return value in REPAIR_FALLBACKS
    if name == "threshold":
        return value is not None and THRESHOLD_RANGE[0] <= float(value) <= THRESHOLD_RANGE[1]
    if name == "num_candidates":
        return value is not None and CANDIDATES_RANGE[0] <= int(value) <= CANDIDATES_RANGE[1]
    if name == "penalty_lambda":
        return value is not None and LAMBDA_RANGE[0] <= float(value) <= LAMBDA_RANGE[1]
    if name in ("prefilter", "detector", "remind", "memory"):
        return value is not None and value != ""
    return True


def write_settings(settings: ChatSettings, state: MutableMapping, only_offered: bool = False) -> None:
    """Put every field of ``settings`` under its key (before the widgets exist in this run). With ``only_offered``
    (restoring a stored session), a value the control cannot show leaves the control as it is."""
    for f in fields(settings):
        value = getattr(settings, f.name)
        if only_offered and not _offered(f.name, value):
            continue
        state[key(f.name)] = TO_STATE.get(f.name, lambda v: v)(value)
    state.pop(TAU_SLIDER_KEY, None)  # the slider shows the settings' τ (or the detector's) again


def read_settings(state: MutableMapping, defaults: ChatSettings) -> ChatSettings:
    """The settings the state holds, each missing field from ``defaults``. The decoding values are always the
    chosen preset's (the sidebar offers presets, not single values)."""
    from bots.base import PRESETS

    values = asdict(defaults)
    for f in fields(ChatSettings):
        if key(f.name) in state:
            values[f.name] = FROM_STATE.get(f.name, lambda v: v)(state[key(f.name)])
    preset = PRESETS.get(values["preset"])
    values["decoding"] = preset if preset is not None else {}  # the record keeps its plain values
    return ChatSettings(**values)


def ensure_defaults(defaults: ChatSettings, state: MutableMapping) -> None:
    """At the start of every run, before any of the widgets exists: every field's value written under its key anew,
    the one the state holds (what the user chose, what the browser just sent) or else ``defaults``' (the widgets then
    need no default). Written, not only kept: Streamlit sends a widget's value to the browser only when it was set
    this run, and a browser that missed the run which first drew the widget (a first run cut short by an early click
    or message) would otherwise show the widget's own default (1 candidate, guard off) and send that back."""
    for f in fields(defaults):
        name = key(f.name)
        state[name] = state[name] if name in state else TO_STATE.get(f.name, lambda v: v)(getattr(defaults, f.name))


#: the settings record as the chat page last drew it (not a widget's key, so Streamlit keeps it on other pages)
RECORD_KEY = "chat_record::settings"
VIEW_RECORD_KEY = "chat_record::view"


def remember(settings: ChatSettings, state: MutableMapping) -> None:
    """Keep the record the sidebar shows, and the chat page's view preferences, where no page switch removes
    them (Streamlit forgets a widget's value when a run does not draw the widget: another page is shown)."""
    state[RECORD_KEY] = settings
    state[VIEW_RECORD_KEY] = {k: v for k, v in state.items() if isinstance(k, str) and k.startswith(VIEW_PREFIX)}


def restore_missing(state: MutableMapping) -> None:
    """Before the sidebar's widgets exist: put back the values another page's run made Streamlit forget."""
    record = state.get(RECORD_KEY)
    if isinstance(record, ChatSettings):
        for f in fields(record):
            if key(f.name) not in state:
                state[key(f.name)] = TO_STATE.get(f.name, lambda v: v)(getattr(record, f.name))
    for name, value in (state.get(VIEW_RECORD_KEY) or {}).items():
        if name not in state:
            state[name] = value
