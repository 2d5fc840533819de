"""Bring a downloaded transcript back as a stored session.

Two shapes are read: the chat page's download (a DECODE-shaped JSON record: ``turns`` with
``agent_id`` "user"/"bot" and, for bot turns, the guard report, plus ``persona``) — also one such
record per line — and the probe playground's dialogue text (``Speaker: text`` lines). In a
dialogue whose speakers are not called user/bot, the speaker of the last turn is the bot.
Anything else is refused with one ``TranscriptError`` line; nothing is stored then.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace

from conversation.records import BOT, USER, ChatTurn
from guard.judge.report import BotTurnReport
from studio.storage import SessionInfo, Store

MAX_BYTES = 5_000_000


class TranscriptError(ValueError):
    """The file is not a transcript this page can read; the message says what is wrong."""


@dataclass
class Transcript:
    name: str
    turns: list[ChatTurn]
    persona: list[str] = field(default_factory=list)
    record_id: str | None = None


def _decode_text(data: bytes | str, name: str) -> str:
    if isinstance(data, str):
        return data
    if len(data) > MAX_BYTES:
        raise TranscriptError(f"{name}: {len(data):,} bytes is too big for a transcript (limit {MAX_BYTES:,})")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{name}: not UTF-8 text (byte 0x{data[exc.start]:02x} at position {exc.start})") \
            from None


def _speakers(raw: list[str], name: str) -> dict[str, str]:
    distinct = list(dict.fromkeys(raw))
    if set(distinct) <= {USER, BOT}:
        return {USER: USER, BOT: BOT}
    if len(distinct) > 2:
        raise TranscriptError(f"{name}: {len(distinct)} speakers ({', '.join(distinct[:4])}); a goading session "
                              "has two, the user and the bot")
    bot = raw[-1]
    return {s: (BOT if s == bot else USER) for s in distinct}


def _from_record(obj: dict, name: str) -> Transcript:
    raw_turns = obj.get("turns")
    if not isinstance(raw_turns, list) or not raw_turns:
        raise TranscriptError(f"{name}: field 'turns' must be a non-empty list of {{agent_id, text}} objects")
    speakers, texts, reports = [], [], []
    for i, raw in enumerate(raw_turns):
        if not isinstance(raw, dict):
            raise TranscriptError(f"{name}: turns[{i}] must be an object, not {type(raw).__name__}")
        text, speaker = raw.get("text"), raw.get("agent_id", raw.get("speaker"))
        if not isinstance(text, str) or not text.strip():
            raise TranscriptError(f"{name}: turns[{i}].text must be non-empty text")
        if speaker is None or isinstance(speaker, (list, dict, bool)):
            raise TranscriptError(f"{name}: turns[{i}].agent_id is missing (the speaker)")
        speakers.append(str(speaker))
        texts.append(text.strip())
        guard = raw.get("guard")
        try:
            reports.append(BotTurnReport.from_json(guard) if isinstance(guard, dict) else None)
        except (TypeError, ValueError, KeyError) as exc:
            raise TranscriptError(f"{name}: turns[{i}].guard is not a guard report ({exc})") from None
    mapping = _speakers(speakers, name)
    turns = [ChatTurn(i, mapping[s], t, r if mapping[s] == BOT else None)
             for i, (s, t, r) in enumerate(zip(speakers, texts, reports))]
    persona = obj.get("persona") or []
    if not isinstance(persona, list) or not all(isinstance(p, str) for p in persona):
        raise TranscriptError(f"{name}: field 'persona' must be a list of strings")
    record_id = obj.get("record_id")
    return Transcript(name, turns, [p for p in persona if p.strip()], None if record_id is None else str(record_id))


def _from_dialogue_text(text: str, name: str) -> Transcript:
    from guard.eval.dialogue_text import DialogueTextError, parse_dialogue_text

    try:
        dialogue = parse_dialogue_text(text, record_id=name)
    except DialogueTextError as exc:
        raise TranscriptError(f"{name}: {exc}") from None
    mapping = _speakers([t.agent_id for t in dialogue.turns], name)
    return Transcript(name, [ChatTurn(i, mapping[t.agent_id], t.text) for i, t in enumerate(dialogue.turns)])


def read_transcripts(data: bytes | str, name: str = "transcript") -> list[Transcript]:
    """Every transcript in the file (a JSON record, JSON lines, or playground dialogue text)."""
    text = _decode_text(data, name).strip()
    if not text:
        raise TranscriptError(f"{name}: the file is empty")
    if text.startswith("{") or text.startswith("["):
        try:
            parsed = json.loads(text)
            objects = parsed if isinstance(parsed, list) else [parsed]
        except json.JSONDecodeError as whole:
            objects = []
            for line in text.splitlines():
                if not line.strip():
                    continue
                try:
                    objects.append(json.loads(line))
                except json.JSONDecodeError:
                    raise TranscriptError(f"{name}: not valid JSON (line {whole.lineno}, column {whole.colno}: "
                                          f"{whole.msg})") from None
        out = []
        for k, obj in enumerate(objects):
            if not isinstance(obj, dict):
                raise TranscriptError(f"{name}: record {k + 1} must be a JSON object with 'turns'")
            out.append(_from_record(obj, name if len(objects) == 1 else f"{name} record {k + 1}"))
        if not out:
            raise TranscriptError(f"{name}: no transcript records in the file")
        return out
    return [_from_dialogue_text(text, name)]


def import_transcript(store: Store, transcript: Transcript, info: SessionInfo | None = None) -> str:
    """Store the transcript as a new session (source "import"); returns the new session id. ``info``: the player and
    the browser it belongs to (the chat page's import); the command line's imports belong to no browser."""
    session_id = f"import-{uuid.uuid4().hex[:12]}"
    base = info or SessionInfo(id=session_id)
    meta = {**base.meta, "imported_from": transcript.name}
    if transcript.record_id:
        meta["original_record_id"] = transcript.record_id
    settings = replace(base.settings, persona=transcript.persona or list(base.settings.persona))
    store.save_session(SessionInfo(id=session_id, settings=settings, player=base.player, source="import", meta=meta,
                                   owner=base.owner))
    store.save_turns(session_id, transcript.turns)
    return session_id
