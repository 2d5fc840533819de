"""The OpenAI chat-completions wire format as the guard server speaks it: requests read and checked, responses
and server-sent-event chunks written, and the ``guard`` field that carries the guard's report (in its one JSON form,
``BotTurnReport.to_json``, as the studio stores it and the transcript download carries it).

Every check raises ``RequestError`` with the HTTP status and a message that says what to fix, in OpenAI's error
shape (``{"error": {"message", "type", "param", "code"}}``), so an OpenAI client shows it as it is. Pure: no
model, no web framework; ``serve.app`` turns these into HTTP.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

from bots.base import DecodingConfig
from conversation.classroom import for_students
from conversation.records import BOT, USER, ChatSettings, ChatTurn
from guard.judge.policies import REPAIR_FALLBACKS
from guard.judge.report import BotTurnReport
from guard.judge.verdicts import PairScore
from guard.judge.wording import summary
from guard.records import Turn
from guard.vocabulary import GUARD_MODES, GuardMode, PremiseSource

#: Roles a request may use: system (and OpenAI's newer name for it, developer) carry the persona.
SYSTEM_ROLES = ("system", "developer")
ROLES = (*SYSTEM_ROLES, "user", "assistant")
#: Request fields that ask for something a guarded chat reply cannot give.
UNSUPPORTED = {
    "tools": "tool calls are not supported: the guard judges chat replies",
    "functions": "function calls are not supported: the guard judges chat replies",
    "tool_choice": "tool calls are not supported: the guard judges chat replies",
}
#: The guard settings a request may change (its ``guard`` field): the settings record's own fields
#: (``conversation.records.ChatSettings``) and what each must be.
GUARD_FIELDS = {
    "guard_mode": f"one of {', '.join(GUARD_MODES)}",
    "threshold": "a number between 0 and 1 (exclusive): the detector's τ",
    "num_candidates": "a whole number of candidate replies to generate and judge",
    "penalty_lambda": "a number >= 0 (penalty mode's λ)",
    "repair_fallback": f"one of {', '.join(REPAIR_FALLBACKS)} (the policy repair falls back to)",
    "fallback": "a non-empty string (the safe reply: what block mode sends when every candidate contradicts)",
    "remind": "true or false (when nothing consistent answers, ask the bot again reminded of the fact it contradicted)",
    "memory": "true or false (before the bot writes, the facts the message is about go into its prompt as its memory)",
}
#: the guard setting for how many candidates are judged (what the error for ``n`` > 1 points to; one of GUARD_FIELDS)
CANDIDATES_FIELD = "num_candidates"
#: names the ``guard`` field took before it used the settings record's: refused with the name to use
RENAMED_GUARD_FIELDS = {"mode": "guard_mode", "candidates": "num_candidates", "safe_reply": "fallback"}
MAX_NEW_TOKENS = 4096
MAX_TOP_K = 1000  # a filter wider than this is no filter on these vocabularies' useful tail


class RequestError(Exception):
    """A request the server refuses: HTTP ``status`` and a message that says what to fix."""

    def __init__(self, status: int, message: str, param: str | None = None, kind: str | None = None,
                 code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.kind = kind or _ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
        self.code = code

    def body(self) -> dict:
        return error_body(self.message, self.kind, self.param, self.code)


_ERROR_TYPES = {401: "authentication_error", 404: "not_found_error", 413: "invalid_request_error",
                502: "upstream_error", 503: "server_busy"}


def error_body(message: str, kind: str = "invalid_request_error", param: str | None = None,
               code: str | None = None) -> dict:
    """OpenAI's error shape; the ``openai`` client raises it with ``message`` as the exception's text."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


@dataclass
class ChatRequest:
    """A checked chat request: the conversation as the guard's turns and persona, where each came from in the
    request's ``messages`` (so the evidence can name message indices), and the settings it asks for: the guard's
    and the decoding (``settings.decoding``); which bot, preset and detector the server fills in
    (``serve.service.GuardService.answer``)."""

    turns: list[Turn]
    turn_messages: list[int]  # turn i came from messages[turn_messages[i]]
    persona: list[str]  # the system messages' lines, in order
    persona_messages: list[int]  # persona line i came from messages[persona_messages[i]]
    settings: ChatSettings
    stream: bool = False
    model: str = ""
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    created: int = field(default_factory=lambda: int(time.time()))

    @property
    def decoding(self) -> DecodingConfig:
        """The decoding the request asks for: the server's preset with the request's sampling fields."""
        return self.settings.decoding_config


def parse_json(body: bytes) -> dict:
    """The request body as a JSON object, or a 400 that says where the JSON breaks."""
    if not body.strip():
        raise RequestError(400, 'the request body is empty: send a JSON object such as {"model": "...", '
                                '"messages": [{"role": "user", "content": "Hi!"}]}')
    try:
        data = json.loads(body)
    except UnicodeDecodeError:
        raise RequestError(400, "the request body is not UTF-8 text: send JSON encoded as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise RequestError(400, f"the request body is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                                f"{exc.msg}); send a JSON object with a 'messages' list") from None
    if not isinstance(data, dict):
        raise RequestError(400, f"the request body is a JSON {_json_type(data)}, not an object: send "
                                '{"model": "...", "messages": [...]}')
    return data


def parse_chat_request(data: Mapping, defaults: ChatSettings, max_candidates: int = 16) -> ChatRequest:
    """Check a chat-completions body and read it as a conversation for the guard (``RequestError`` otherwise).

    The conversation is the request's ``messages``: user and assistant turns in order, system (or developer)
    messages carrying the persona one line a persona line; the last message must be the user's. ``defaults`` are
    the server's settings: the request's ``guard`` field changes their guard fields (at most ``max_candidates``
    candidates), and ``max_tokens``, ``temperature``, ``top_k``, ``top_p``, ``repetition_penalty`` and ``seed``
    adjust their decoding.
    """
    for name, why in UNSUPPORTED.items():
        if data.get(name):
            raise RequestError(400, f"{why}; leave '{name}' out", param=name)
    model = data.get("model", "")
    if model is not None and not isinstance(model, str):
        raise RequestError(400, f"'model' must be a string, got {_json_type(model)}", param="model")
    stream = data.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise RequestError(400, f"'stream' must be true or false, got {_show(stream)}", param="stream")
    n = data.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):
        raise RequestError(400, f"'n' must be 1, got {_show(n)}: the guard answers with the one reply its policy "
                                "chose; the candidates it judged are in the response's 'guard' field (set how many "
                                f"with guard.{CANDIDATES_FIELD})", param="n")
    turns, turn_messages, persona, persona_messages = _conversation(data.get("messages"))
    settings = replace(_guard_settings(data.get("guard"), defaults, max_candidates),
                       decoding=adjusted_decoding(data, defaults.decoding_config), persona=list(persona))
    return ChatRequest(turns=turns, turn_messages=turn_messages, persona=persona, persona_messages=persona_messages,
                       settings=settings, stream=bool(stream), model=model or "")


def _conversation(messages: object) -> tuple[list[Turn], list[int], list[str], list[int]]:
    if messages is None:
        raise RequestError(400, "the request has no 'messages': send the conversation as a list such as "
                                '[{"role": "user", "content": "Hi!"}]', param="messages")
    if not isinstance(messages, list) or not messages:
        what = "an empty list" if isinstance(messages, list) else f"a {_json_type(messages)}"
        raise RequestError(400, f"'messages' must be a non-empty list of messages, got {what}", param="messages")
    turns, turn_messages, persona, persona_messages = [], [], [], []
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise RequestError(400, f"{where} must be an object with 'role' and 'content', got "
                                    f"{_json_type(message)}", param=where)
        role = message.get("role")
        if role not in ROLES:
            hint = " (tool results are not supported: the guard judges chat replies)" \
                if role in ("tool", "function") else ""
            raise RequestError(400, f"{where}.role is {_show(role)}: use one of {', '.join(ROLES)}{hint}",
                               param=f"{where}.role")
        text = _content(message.get("content"), where)
        if role in SYSTEM_ROLES:
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            persona += lines
            persona_messages += [index] * len(lines)
        else:
            turns.append(Turn(len(turns), USER if role == "user" else BOT, text))
            turn_messages.append(index)
    if not any(t.agent_id == USER for t in turns):
        raise RequestError(400, "the messages hold no user message: the guard answers the user's last message; add "
                                '{"role": "user", "content": "..."}', param="messages")
    if turns[-1].agent_id != USER:
        raise RequestError(400, f"the last message (messages[{turn_messages[-1]}]) is the assistant's: end with the "
                                "user's message, the server writes the assistant's next reply", param="messages")
    return turns, turn_messages, persona, persona_messages


def _content(content: object, where: str) -> str:
    """A message's text: a string, or a list of text parts (OpenAI's content parts)."""
    if isinstance(content, list):
        texts = []
        for k, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                kind = part.get("type") if isinstance(part, dict) else _json_type(part)
                raise RequestError(400, f"{where}.content[{k}] is a {_show(kind)} part: only text parts "
                                        '({"type": "text", "text": "..."}) are supported', param=f"{where}.content")
            texts.append(part["text"])
        content = "\n".join(texts)
    if not isinstance(content, str):
        raise RequestError(400, f"{where}.content must be a string, got {_json_type(content)}",
                           param=f"{where}.content")
    if not content.strip():
        raise RequestError(400, f"{where}.content is empty: send the message's text, or leave the message out",
                           param=f"{where}.content")
    return content


def _guard_settings(value: object, defaults: ChatSettings, max_candidates: int) -> ChatSettings:
    """The request's ``guard`` field over the server's settings (the record's guard fields; the server fills in the
    rest)."""
    value = {} if value is None else value
    if not isinstance(value, dict):
        raise RequestError(400, f"'guard' must be an object of guard settings ({', '.join(GUARD_FIELDS)}), got "
                                f"{_json_type(value)}", param="guard")
    for old, new in RENAMED_GUARD_FIELDS.items():
        if old in value:
            raise RequestError(400, f"guard.{old} is now guard.{new} (the guard settings take the names of the chat "
                                    f"settings record): send {new}", param=f"guard.{old}")
    unknown = sorted(set(value) - set(GUARD_FIELDS))
    if unknown:
        raise RequestError(400, f"unknown guard setting {unknown[0]!r}: the settings are {', '.join(GUARD_FIELDS)}",
                           param=f"guard.{unknown[0]}")

    def bad(name: str, got: object) -> RequestError:
        return RequestError(400, f"guard.{name} must be {GUARD_FIELDS[name]}, got {_show(got)}", param=f"guard.{name}")

    mode = value.get("guard_mode", defaults.mode)
    if mode not in GUARD_MODES:
        raise bad("guard_mode", mode)
    repair_fallback = value.get("repair_fallback", defaults.repair_fallback or GuardMode.RERANK)
    if repair_fallback not in REPAIR_FALLBACKS:
        raise bad("repair_fallback", repair_fallback)
    threshold = value.get("threshold", defaults.threshold)  # None: the detector's calibrated τ
    if threshold is not None and (not _number(threshold) or not 0.0 < threshold < 1.0):
        raise bad("threshold", threshold)
    candidates = value.get("num_candidates", defaults.num_candidates)
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
        raise bad("num_candidates", candidates)
    if candidates > max_candidates:
        raise RequestError(400, f"guard.num_candidates is {candidates}, over this server's limit of {max_candidates} "
                                "(--max-candidates)", param="guard.num_candidates")
    penalty_lambda = value.get("penalty_lambda", defaults.penalty_lambda)
    if not _number(penalty_lambda) or penalty_lambda < 0:
        raise bad("penalty_lambda", penalty_lambda)
    fallback = value.get("fallback", defaults.fallback)
    if fallback is not None and (not isinstance(fallback, str) or not fallback.strip()):
        raise bad("fallback", fallback)
    remind = value.get("remind", defaults.remind)
    if not isinstance(remind, bool):
        raise bad("remind", remind)
    memory = value.get("memory", defaults.memory)
    if not isinstance(memory, bool):
        raise bad("memory", memory)
    return replace(defaults, guard_mode=GuardMode(mode), threshold=None if threshold is None else float(threshold),
                   num_candidates=candidates, penalty_lambda=float(penalty_lambda), fallback=fallback, repair_fallback=GuardMode(repair_fallback),
                   remind=remind, memory=memory)


def adjusted_decoding(data: Mapping, decoding: DecodingConfig) -> DecodingConfig:
    """The server's decoding preset with the request's ``max_tokens``, ``temperature`` (0 = greedy: one
    candidate), ``top_p`` (sampling switches to nucleus sampling), ``top_k`` (vLLM's field: the top-k filter, 0 or -1
    for none; with ``top_p`` both filters apply), ``repetition_penalty`` (> 1 discourages tokens the reply already
    holds; vLLM's server takes the same field) and ``seed``. ``python -m serve`` resolves its own ``--temperature``,
    ``--top-k``, ``--top-p`` and ``--repetition-penalty`` through this too, so both are checked alike."""
    changes: dict = {}
    limit = data.get("max_completion_tokens", data.get("max_tokens"))
    name = "max_completion_tokens" if "max_completion_tokens" in data else "max_tokens"
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_NEW_TOKENS:
            raise RequestError(400, f"'{name}' must be a whole number from 1 to {MAX_NEW_TOKENS}, got {_show(limit)}",
                               param=name)
        changes["max_new_tokens"] = limit
        changes["min_new_tokens"] = min(decoding.min_new_tokens, limit)
    temperature = data.get("temperature")
    if temperature is not None:
        if not _number(temperature) or not 0 <= temperature <= 2:
            raise RequestError(400, f"'temperature' must be a number from 0 to 2, got {_show(temperature)}",
                               param="temperature")
        if temperature == 0:
            changes["method"] = "greedy"
        else:
            changes["temperature"] = float(temperature)
    top_k = data.get("top_k")
    if top_k is not None:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not -1 <= top_k <= MAX_TOP_K:
            raise RequestError(400, f"'top_k' must be a whole number from 0 to {MAX_TOP_K} (0 or -1: no top-k "
                               f"filter), got {_show(top_k)}", param="top_k")
        top_k = max(top_k, 0)
    top_p = data.get("top_p")
    if top_p is not None:
        if not _number(top_p) or not 0 < top_p <= 1:
            raise RequestError(400, f"'top_p' must be a number above 0 and at most 1, got {_show(top_p)}",
                               param="top_p")
    if changes.get("method") != "greedy":
        if top_p is not None:  # nucleus sampling instead of the preset's method, top-k only if asked for too
            changes.update(method="top_p", top_p=float(top_p), top_k=top_k or 0)
        elif top_k is not None:
            changes["top_k"] = top_k
            if not decoding.samples:
                changes["method"] = "top_k"
    penalty = data.get("repetition_penalty")
    if penalty is not None:
        if not _number(penalty) or not 0 < penalty <= 2:
            raise RequestError(400, f"'repetition_penalty' must be a number above 0 and at most 2 (1 = off), got "
                               f"{_show(penalty)}", param="repetition_penalty")
        changes["repetition_penalty"] = float(penalty)
    seed = data.get("seed")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise RequestError(400, f"'seed' must be a whole number, got {_show(seed)}", param="seed")
        changes["seed"] = seed
    try:
        return decoding.replace(**changes) if changes else decoding
    except ValueError as exc:
        raise RequestError(400, str(exc)) from None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _json_type(value: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _show(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------------------------------------------- responses
def completion_body(request: ChatRequest, turn: ChatTurn, model: str) -> dict:
    """The chat.completion object: one choice, the reply that was sent, and the guard's report."""
    return {
        "id": request.id, "object": "chat.completion", "created": request.created, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": turn.text}, "logprobs": None,
                     "finish_reason": "stop"}],
        "guard": guard_field(turn.report, request),
    }


_PIECE = re.compile(r"\s*\S+\s*")


def stream_events(request: ChatRequest, turn: ChatTurn, model: str) -> Iterator[str]:
    """The reply as server-sent events of chat.completion.chunk objects: the role, the text word by word, then a
    last chunk with ``finish_reason`` and the guard's report, and ``[DONE]``. The guard chooses among whole
    candidates, so the reply is complete before the first event: streaming gives clients their usual protocol."""
    def chunk(delta: dict, finish: str | None = None, **extra) -> str:
        body = {"id": request.id, "object": "chat.completion.chunk", "created": request.created, "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for piece in _PIECE.findall(turn.text):
        yield chunk({"content": piece})
    yield chunk({}, "stop", guard=guard_field(turn.report, request))
    yield "data: [DONE]\n\n"


def guard_field(report: BotTurnReport, request: ChatRequest) -> dict:
    """The response's extra ``guard`` field: the guard's report in its one JSON form (``report``: every candidate,
    its verdict with evidence, what the policy did), the turn's status and summary in words, and where the evidence
    sits in the request: ``message_indices`` maps an evidence pair's ``turn_id`` to the index of the request's
    message it came from (``turns`` for ``history`` pairs, ``persona`` for a persona line's), and
    ``evidence_message_indices`` lists, per candidate, the messages its evidence points at."""
    return {
        # nobody signs in here: the classroom filter's withheld candidates go out masked, as to a student
        "report": for_students(report.to_json()), "status": report.status, "summary": summary(report),
        "message_indices": {"turns": list(request.turn_messages), "persona": list(request.persona_messages)},
        "evidence_message_indices": [sorted({i for i in (_message_index(p, request) for p in c.evidence)
                                             if i is not None}) for c in report.candidates],
    }


def _message_index(pair: PairScore, request: ChatRequest) -> int | None:
    """The index in the request's ``messages`` of the message a pair's premise comes from: the turn for
    ``history``, the system message holding the line for ``persona``; None for the reply's own clauses."""
    index, sources = pair.turn_id, None
    if pair.source == PremiseSource.HISTORY:
        sources = request.turn_messages
    elif pair.source == PremiseSource.PERSONA:
        sources = request.persona_messages
    if sources is None or index is None or not 0 <= index < len(sources):
        return None
    return sources[index]


def models_body(model: str, created: int) -> dict:
    return {"object": "list", "data": [{"id": model, "object": "model", "created": created,
                                        "owned_by": "consistency-guard"}]}
