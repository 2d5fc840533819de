"""One guarded answer per request, with nothing kept between requests.

``GuardService.answer`` rebuilds the request's conversation, asks ``conversation.guarding.guarded_reply`` for the
guarded bot turn (the generator's candidates, the guard's report: the chat page's own code path) and returns it.
That call is the server's only way into ``conversation``: a change there touches one place here. The guard is
loaded once (``guard.judge.pipeline.load_guard``); a request that asks for another threshold is judged at it by the same
guard, and concurrent requests take turns on its scorer (``embedded.turns``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bots.base import Bot, BotError, ServerBusy
from conversation.classroom import ClassroomFilter
from conversation.guarding import guarded_reply
from conversation.records import ChatSettings, ChatTurn, Conversation
from guard.vocabulary import GuardMode
from serve.generators import is_upstream
from serve.protocol import ChatRequest, RequestError

if TYPE_CHECKING:  # loads torch
    from guard.judge.pipeline import Guard

NO_DETECTOR = "none"


@dataclass
class GuardService:
    """What the server answers with: the generator, the guard, the settings a request starts from and the names
    it reports."""

    generator: Bot
    generator_label: str
    guard: Guard | None  # None: started with --detector none, only mode off
    defaults: ChatSettings  # the command line's settings: bot, preset and its decoding, detector, guard settings
    max_candidates: int = 16
    model_name: str = "consistency-guard"
    #: the classroom filter every candidate is checked with first (conversation.classroom); None: started with it off
    classroom: ClassroomFilter | None = None

    def answer(self, request: ChatRequest) -> ChatTurn:
        """The guarded bot turn for the request's conversation (its ``text`` is the reply, ``report`` the guard's
        report). A generator failure is a ``RequestError``: 502 for an upstream, 500 for a local bot."""
        settings = request.settings
        if settings.mode != GuardMode.OFF and self.guard is None:
            raise RequestError(400, f"guard mode {settings.mode!r} needs a detector, and this server was started "
                                    "without one (--detector none): send guard.guard_mode \"off\", or start it with "
                                    "--detector embedded", param="guard.guard_mode")
        settings = replace(settings, bot=self.generator_label,
                           detector="" if self.guard is None else self.guard.name)
        # no system message: the bot plays its own persona (the embedded bot's "My name is Sam. ..."), so the guard
        # checks against it and the memory recalls it, as on the chat page (ChatSettings.played_persona)
        persona, _ = settings.played_persona
        settings = replace(settings, persona=persona)
        conversation = Conversation(persona=list(persona), record_id=request.id)
        for message in request.turns:
            conversation.add(message.agent_id, message.text)
        try:
            return conversation.append(guarded_reply(conversation, self.generator, self.guard, settings,
                                                     classroom=self.classroom))
        except ServerBusy as exc:  # the bot's line is full, or this request waited its longest (bots.worker)
            raise RequestError(503, f"{str(exc).rstrip('.')} (nothing was stored: send the same request again)",
                               code="server_busy") from exc
        except BotError as exc:
            if is_upstream(self.generator):
                raise RequestError(502, f"the upstream chat server could not answer: {str(exc).rstrip('.')} "
                                        "(nothing was stored here: send the same request again once the upstream "
                                        "is back)",
                                   kind="upstream_error", code="upstream_unavailable") from exc
            raise RequestError(500, f"the bot could not answer: {exc}", kind="server_error") from exc
