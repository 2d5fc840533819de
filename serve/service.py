"""One guarded answer per request, with nothing kept between requests.

``GuardService.answer`` rebuilds the request's conversation, asks ``conversation.guarding.guarded_reply`` for the
guarded bot turn (the generator's candidates, the detector's verdicts, the policy's choice: the chat page's own
code path) and returns it. That call is the server's only way into ``conversation``: a change there touches one
place here. The detector is loaded once; requests that ask for another threshold get their own
``ContradictionDetector`` over the same scorer (``DetectorPool``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bots.base import Bot, BotError, DecodingConfig
from conversation.guarding import guarded_reply
from conversation.records import ChatTurn, Conversation
from guard.vocabulary import GuardMode
from serve.generators import is_upstream
from serve.protocol import ChatRequest, GuardDefaults, RequestError

if TYPE_CHECKING:  # loads torch
    from guard.detector import ContradictionDetector
    from guard.verdicts import Verdict

NO_DETECTOR = "none"


class _TakingTurnsDetector:
    """A detector whose calls take turns (one scorer for every request, its caches not shared mid-call); it
    offers what ``guarded_reply`` uses of a ContradictionDetector."""

    def __init__(self, detector: ContradictionDetector, lock: threading.Lock) -> None:
        self.detector = detector
        self.prefilter_k = detector.prefilter_k
        self.threshold = detector.threshold
        self._lock = lock

    def detect_candidates(self, history, candidates, speaker, persona=()) -> list[Verdict]:
        with self._lock:
            return self.detector.detect_candidates(history, candidates, speaker, persona=persona)


class DetectorPool:
    """The detector loaded once (``name``: embedded, a checkpoint folder, a cached hub name) and one
    ContradictionDetector per threshold requests ask for (the last ``keep`` thresholds)."""

    def __init__(self, name: str, scorer, embedder=None, prefilter_k: int | None = None, keep: int = 8) -> None:
        self.name = name
        self.scorer = scorer
        self.embedder = embedder
        self.prefilter_k = prefilter_k if embedder is not None else None
        self.keep = keep
        self._detectors: OrderedDict[float, _TakingTurnsDetector] = OrderedDict()
        self._lock = threading.Lock()  # guards the pool
        self._compute = threading.Lock()  # one detector call at a time

    @classmethod
    def load(cls, name: str, prefilter_k: int | None = 8) -> DetectorPool:
        """Load the scorer (and the prefilter's embedder when ``prefilter_k``); raises what guard.loading raises."""
        from guard.loading import load_embedder, load_scorer

        scorer = load_scorer(name)
        embedder = load_embedder() if prefilter_k else None
        return cls(name, scorer, embedder, prefilter_k)

    def default_threshold(self) -> float:
        """The checkpoint's calibrated τ (its guard_config.json), or DECODE's 0.5 without one."""
        from guard.loading import default_threshold

        return float(default_threshold(self.name))

    def get(self, threshold: float) -> _TakingTurnsDetector:
        from guard.detector import ContradictionDetector

        key = round(float(threshold), 4)
        with self._lock:
            if key in self._detectors:
                self._detectors.move_to_end(key)
                return self._detectors[key]
            detector = _TakingTurnsDetector(ContradictionDetector(
                self.scorer, threshold=key, embedder=self.embedder, prefilter_k=self.prefilter_k), self._compute)
            self._detectors[key] = detector
            while len(self._detectors) > self.keep:
                self._detectors.popitem(last=False)
            return detector


@dataclass
class GuardService:
    """What the server answers with: the generator, the detectors, the defaults and the names it reports."""

    generator: Bot
    generator_label: str
    detectors: DetectorPool | None  # None: started with --detector none, only mode off
    defaults: GuardDefaults
    decoding: DecodingConfig  # the preset's; a request's sampling fields adjust it (serve.protocol)
    preset: str = ""
    model_name: str = "consistency-guard"

    def answer(self, request: ChatRequest) -> ChatTurn:
        """The guarded bot turn for the request's conversation (its ``text`` is the reply, ``report`` the guard's
        report). A generator failure is a ``RequestError``: 502 for an upstream, 500 for a local bot."""
        settings = request.settings
        detector = None
        if settings.mode != GuardMode.OFF:
            if self.detectors is None:
                raise RequestError(400, f"guard mode {settings.mode!r} needs a detector, and this server was started "
                                        "without one (--detector none): send guard.mode \"off\", or start it with "
                                        "--detector embedded", param="guard.mode")
            detector = self.detectors.get(settings.threshold)
        conversation = Conversation(persona=list(request.persona), record_id=request.id)
        for message in request.turns:
            conversation.add(message.agent_id, message.text)
        settings = replace(settings, bot=self.generator_label, preset=self.preset,
                           detector="" if detector is None else self.detectors.name)
        try:
            return guarded_reply(conversation, self.generator, detector, settings)
        except BotError as exc:
            if is_upstream(self.generator):
                raise RequestError(502, f"the upstream chat server could not answer: {str(exc).rstrip('.')} "
                                        "(nothing was stored here: send the same request again once the upstream "
                                        "is back)",
                                   kind="upstream_error", code="upstream_unavailable") from exc
            raise RequestError(500, f"the bot could not answer: {exc}", kind="server_error") from exc
