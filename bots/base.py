"""The one interface every generator speaks: history (+ persona) and decoding settings in, N scored candidates out.

The guard re-ranks or blocks candidates, so every backend returns several replies with a comparable
score (the mean log-probability of the reply's tokens under the generator that wrote it).
"""

from __future__ import annotations

import dataclasses
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from guard.records import Candidate, Turn  # the guard's records: the turns bots read, the candidates they return

SPEAKERS = ("user", "bot")
DECODING_METHODS = ("beam", "top_k", "top_p", "sample_rank", "greedy")
DEFAULT_SAMPLE_RANK_SAMPLES = 20
#: System prompt of the chat-style bots (embedded, chat, remote); the persona is appended to it.
SYSTEM_PROMPT = (
    "You are a person chatting casually with a new friend. Answer in one or two short sentences, "
    "in the first person, and stay consistent with what you said before."
)


class BotError(RuntimeError):
    """A generator could not answer; the message says what to do about it (start the server, install...)."""


class ServerBusy(BotError):
    """Too many replies wait for the bot's model (bots.worker): the line is full, or this one waited longer than its
    line allows. Nothing was generated; the same message can be sent again in a moment (the API answers 503)."""

    def __init__(self, message: str, waiting: int):
        super().__init__(message)
        self.waiting = waiting


@dataclass(frozen=True)
class DecodingConfig:
    """How candidates are decoded.

    ``method`` picks the search: "greedy", "beam" (``num_beams``; the N best beams are returned),
    "top_k" / "top_p" (N independent samples), "sample_rank" (``num_samples`` samples, the N with the
    highest mean log-probability are returned, as in Adiwardana et al. 2020). ``min_new_tokens`` and
    ``no_repeat_ngram_size`` apply to every method (BlenderBot's beam settings use both).

    Repetition across turns: ``history_ngram_size`` = n > 0 forbids the reply any run of n tokens that
    already occurs in an earlier turn of the conversation (the bot's replies and the user's messages), so a
    small model cannot copy its last answer or echo the question (the local bots; bots.local). It is not
    ``no_repeat_ngram_size``, which looks inside the reply only (CTranslate2) or also at the whole prompt,
    system text included (transformers). ``repetition_penalty`` > 1 divides the logits of tokens the reply
    already holds (CTRL's penalty; CTranslate2 counts the reply's tokens only, transformers the prompt's too).
    """

    method: str = "top_p"
    num_beams: int = 1
    top_k: int = 0
    top_p: float = 1.0
    temperature: float = 1.0
    min_new_tokens: int = 0
    no_repeat_ngram_size: int = 0
    max_new_tokens: int = 32
    seed: int | None = None
    num_samples: int | None = None  # sample_rank only: samples drawn before ranking (None = 20)
    history_ngram_size: int = 0  # no run of this many tokens from an earlier turn (0 = off; local bots)
    repetition_penalty: float = 1.0

    def __post_init__(self) -> None:
        problems = []
        if self.method not in DECODING_METHODS:
            problems.append(f"method must be one of {', '.join(DECODING_METHODS)}, not {self.method!r}")
        if self.num_beams < 1:
            problems.append("num_beams must be >= 1")
        if self.top_k < 0:
            problems.append("top_k must be >= 0 (0 = no top-k filter)")
        if not 0.0 < self.top_p <= 1.0:
            problems.append("top_p must be in (0, 1]")
        if not (self.temperature > 0.0 and math.isfinite(self.temperature)):
            problems.append("temperature must be > 0")
        if self.max_new_tokens < 1:
            problems.append("max_new_tokens must be >= 1")
        if not 0 <= self.min_new_tokens <= self.max_new_tokens:
            problems.append("min_new_tokens must be between 0 and max_new_tokens")
        if self.no_repeat_ngram_size < 0:
            problems.append("no_repeat_ngram_size must be >= 0")
        if self.num_samples is not None and self.num_samples < 1:
            problems.append("num_samples must be >= 1")
        if self.history_ngram_size < 0 or self.history_ngram_size == 1:
            problems.append("history_ngram_size must be 0 (off) or >= 2 (a 1-token ban would forbid every word used before)")
        if not (self.repetition_penalty > 0.0 and math.isfinite(self.repetition_penalty)):
            problems.append("repetition_penalty must be > 0 (1 = off)")
        if problems:
            raise ValueError("invalid decoding settings: " + "; ".join(problems))

    @property
    def filters(self) -> tuple[int, float]:
        """The sampling filters in effect, (top-k, top-p), where 0 and 1.0 mean none; every engine reads them here.
        "top_k" and "sample_rank" filter by ``top_k`` alone. "top_p" filters by ``top_p``, and by ``top_k`` too when
        it is set: both together, as transformers and vLLM apply them, so the nucleus is drawn from the k likeliest
        tokens and only k are sorted each step (top-p alone sorts the whole vocabulary)."""
        if self.method in ("top_k", "sample_rank"):
            return self.top_k, 1.0
        if self.method == "top_p":
            return self.top_k, self.top_p
        return 0, 1.0

    @property
    def samples(self) -> bool:
        """Whether the method draws random samples (as opposed to a deterministic search)."""
        return self.method in ("top_k", "top_p", "sample_rank")

    def replace(self, **changes) -> DecodingConfig:
        return dataclasses.replace(self, **changes)


#: DECODE §5.3 (000_*.txt) re-ranked BlenderBot's beam search (size 10, min length 20, 3-gram
#: blocking, from Roller et al. 2020), top-k sampling and sample-and-rank (k = 40, 20 samples).
#: The text copy of the paper drops the symbol and value for top-k; k = 40 follows the published
#: paper's Table 6. "fast" is the embedded bot's default: top-k 40 and top-p 0.9 together at temperature 0.8, short
#: replies. A measured sweep of generation settings through the served guard (issue 52,
#: docs/experiments/2026-11-28-generation-settings.md) chose it: top-p 0.9 sent the fewest contradictions and dodges
#: on the tuning script but, alone, sorts the whole vocabulary every step (Enter -> reply +25 %); with top-k 40 kept
#: it sorts 40 tokens (Enter -> reply +0.9 % against top-k alone), sent 36 contradictions + dodges where top-k 40
#: alone sent 51 on the tuning script and 26 against 27 on the report script (two blind labellers). Replies cut by
#: the token limit end at their last complete sentence (``complete_sentences``): the embedded bot's
#: first 32 tokens hold one in 31 of 32 sampled replies, its first 40 in all 32 (docs/app.md), so
#: "fast" stays at 32 for the latency goal and the one-reply greedy preset gets 48. "fast" also bans every
#: 4-token run of an earlier turn (``history_ngram_size``): without it the embedded bot, once it had said
#: "I'm Sophie, a no-nonsense AI chatbot ...", sampled that sentence again for every question.
PRESETS: dict[str, DecodingConfig] = {
    "fast": DecodingConfig(method="top_p", top_k=40, top_p=0.9, temperature=0.8, max_new_tokens=32,
                           history_ngram_size=4),
    "greedy": DecodingConfig(method="greedy", max_new_tokens=48),
    "decode_beam": DecodingConfig(
        method="beam", num_beams=10, min_new_tokens=20, no_repeat_ngram_size=3, max_new_tokens=64
    ),
    "decode_top_k": DecodingConfig(method="top_k", top_k=40, max_new_tokens=64),
    "decode_sample_rank": DecodingConfig(method="sample_rank", top_k=40, num_samples=20, max_new_tokens=64),
    "top_p": DecodingConfig(method="top_p", top_p=0.9, max_new_tokens=64),
}
DEFAULT_PRESET = "fast"


def preset(name: str) -> DecodingConfig:
    """Look a preset up by name, with an error that lists the valid names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise BotError(f"unknown decoding preset {name!r}; choose one of: {', '.join(PRESETS)}") from None


#: Words that end in a full stop without ending the sentence ("Dr. Smith").
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc e.g i.e a.m p.m approx dept est mt no fig".split())
#: Sentence-final punctuation, then any closing quotes/brackets and a trailing emoji run, then a space.
_SENTENCE_END = re.compile(
    r"[.!?…]+[\"'”’)\]]*(?:\s*[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F\u200D\U0001F3FB-\U0001F3FF]+)*(?=\s|$)")
_REPLACEMENT_CHARACTER = "\ufffd"


def complete_sentences(text: str, cut: bool) -> str:
    """A reply that ends where a sentence ends: what every backend returns.

    ``cut`` says the generator stopped at its token limit rather than at its end-of-turn token (or a
    stop string), so the text may end mid-sentence or mid-word ("I've got a few furry"). Such a
    reply keeps its complete sentences; with none complete, its whole words and an ellipsis. A
    token limit can also fall inside a multi-byte character (an emoji), which the tokenizer decodes
    as U+FFFD; those are always removed. A reply that ended on its own is kept as it is.
    """
    text = text.replace(_REPLACEMENT_CHARACTER, "").strip()
    if not cut or not text:
        return text
    end = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[:match.start()].split()
        word = before[-1].lower().rstrip(".") if before else ""
        if match.group().startswith(".") and (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())):
            continue  # "Dr. Smith", "J. Smith": a full stop inside the sentence
        end = match.end()
    if end:
        return text[:end].strip()
    words = text.split()
    if len(words) > 1 and words[-1][-1].isalnum():  # the next token could have continued this word
        words = words[:-1]
    return " ".join(words).rstrip(",;:-–—") + "…"


def first_line(exc: BaseException) -> str:
    """The first line of an exception message (transformers' load errors run to many lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def persona_lines(persona: Sequence[str]) -> list[str]:
    """The persona's non-empty lines, stripped (every backend words them into its prompt its own way)."""
    return [line.strip() for line in persona if line.strip()]


#: how a chat prompt words the bot's memory, the last system message before its reply (``chat_messages``)
MEMORY_NOTE = "What you have said about yourself before, which your reply must agree with:"


def chat_messages(history: Sequence[Turn], persona: Sequence[str] = (),
                  system_prompt: str | None = SYSTEM_PROMPT, memory: Sequence[str] = ()) -> list[dict[str, str]]:
    """The conversation as chat messages: a system prompt carrying the persona, then user/assistant turns.

    One builder for every chat-style backend (a local chat template, an OpenAI-compatible server), so
    they all see the same prompt. ``system_prompt=None`` passes the persona lines on as the system message
    itself, one a line (none without a persona): the guard server (``serve``) forwards a client's own system
    text to the bot behind it that way, instead of wrapping it in this project's prompt.

    ``memory``: facts the reply must agree with (the guard's recall of the fact sheet, ``guard.judge.memory``), as
    the speaker said them; they go last, a system message right before the reply, where a small model heeds them
    (the persona at the top is many turns away by then).
    """
    lines = persona_lines(persona)
    remembered = persona_lines(memory)
    note = [{"role": "system", "content": f"{MEMORY_NOTE} {' '.join(remembered)}"}] if remembered else []
    roles = {"user": "user", "bot": "assistant"}
    turns = [{"role": roles[m.agent_id], "content": m.text} for m in history]
    turns = turns[:-1] + note + turns[-1:]  # the note just before the message it is recalled for
    if system_prompt is None:
        return ([{"role": "system", "content": "\n".join(lines)}] if lines else []) + turns
    system = system_prompt
    if lines:
        system += " Your persona: " + " ".join(lines)
    return [{"role": "system", "content": system}] + turns


def check_history(history: Sequence[Turn]) -> list[Turn]:
    """Reject malformed histories early with a message that says what to fix. A history is the conversation's
    turns (``guard.records.Turn``, e.g. the chat's ``conversation.records.ChatTurn``): ``agent_id`` "user" or "bot"
    (the bot being the generator itself)."""
    checked = []
    for index, message in enumerate(history):
        if not isinstance(message, Turn):
            raise BotError(f"history[{index}] is a {type(message).__name__}, expected a guard.records.Turn")
        if message.agent_id not in SPEAKERS:
            raise BotError(f"history[{index}].agent_id must be 'user' or 'bot', not {message.agent_id!r}")
        if not isinstance(message.text, str):
            raise BotError(f"history[{index}].text must be a string")
        checked.append(message)
    return checked


def crowd_note(drawn: int, asked: int, crowd: int) -> str:
    """The words for a turn whose bot drew fewer candidates than asked for because other students' replies needed
    the model at the same time (bots.ct2.BUSY_CANDIDATES): shown under the reply and kept in its report."""
    others = crowd - 1
    return (f"The server was busy ({others} other {'reply' if others == 1 else 'replies'} waiting for the bot): "
            f"it wrote {drawn} candidates for the guard to choose from instead of {asked}.")


@dataclass(frozen=True)
class PromptCoverage:
    """What a bot's prompt held of the conversation for its reply to the last turn: whether the last turn was cut to
    fit its token budget (its end kept), and how many earlier turns were left out (``LocalTransformersBot.reading``).

    ``budget``: the prompt tokens the bot keeps; ``last_chars`` / ``last_chars_read``: the last turn's length and how
    much of its end the prompt holds; ``earlier`` / ``earlier_read``: the turns before it and how many (the newest)
    the prompt holds."""

    budget: int
    last_chars: int
    last_chars_read: int
    earlier: int
    earlier_read: int

    @property
    def cut(self) -> bool:
        """The bot read only the end of the last turn."""
        return self.last_chars_read < self.last_chars

    def note(self, subject: str = "The message") -> str:
        """What to tell the user when the last turn was cut ("" when it was read whole): in plain words, with the
        numbers. Earlier turns left out of a long conversation are the prompt's normal course and not said unless
        the cut message took their place."""
        if not self.cut:
            return ""
        said = (f"{subject} was too long for the bot: it read only the last {self.last_chars_read:,} of its "
                f"{self.last_chars:,} characters (its prompt holds {self.budget:,} tokens)")
        if self.earlier and not self.earlier_read:
            said += ", and none of the conversation before it"
        return said + "."


class Bot(ABC):
    """A generator of candidate replies. Implementations load their model in ``__init__``."""

    name: str = "bot"
    default_decoding: DecodingConfig = PRESETS[DEFAULT_PRESET]
    #: What runs the model, for the app and the CLIs to show ("CTranslate2 4.8.5 int8", "transformers 5.23.0
    #: float32"); empty for bots without a local model.
    engine_label: str = ""
    #: Whether ``generate(..., on_text=f)`` calls ``f(texts)`` with every candidate's text while they are written
    #: (a local bot on CTranslate2, bots.local); bots without it take no ``on_text``.
    streams_text: bool = False
    #: Whether ``generate(..., on_wait=f)`` calls ``f(n)`` with the generations ahead of it while it waits for a model
    #: shared by a class (bots.worker), and ``queued_s`` says how long the last one waited
    reports_queue: bool = False
    queued_s: float | None = None
    #: (candidates drawn, generations that needed the model) when the last generation drew fewer candidates than
    #: asked for because a class crowded the model (bots.ct2.BUSY_CANDIDATES); None otherwise
    crowded: tuple[int, int] | None = None
    #: Whether ``generate`` and ``continue_reply`` take ``memory=`` (the facts the reply must agree with, put right
    #: before the reply in the prompt); the guarded turn hands the guard's recall only to a bot that does
    reads_memory: bool = False

    @abstractmethod
    def generate(
        self,
        history: list[Turn],
        num_candidates: int,
        decoding: DecodingConfig | None = None,
        persona: Sequence[str] = (),
    ) -> list[Candidate]:
        """Return ``num_candidates`` replies to the last user turn, best generator score first. A bot whose
        ``reads_memory`` is true also takes ``memory=`` (lines the reply must agree with)."""

    #: whether ``continue_reply`` works: the bot writes on from words its reply was opened with (a local decoder-only
    #: model); the guard's reminders restate the facts in the persona of a bot that cannot (a remote server)
    continues_openings: bool = False

    def continue_reply(self, history: list[Turn], opening: str, num_candidates: int,
                       decoding: DecodingConfig | None = None, persona: Sequence[str] = ()) -> list[Candidate]:
        """Replies to the last user turn that begin with ``opening`` ("No, I work as a nurse.") and go on as the bot
        writes them; each candidate's text holds the opening, its score is the continuation's. Only bots whose
        ``continues_openings`` is true can; the others raise ``BotError``."""
        raise BotError(f"{self.name} cannot continue a reply opened for it; restate the facts in its persona instead")

    def prompt_coverage(self, history: Sequence[Turn], persona: Sequence[str] = (),
                        memory: Sequence[str] = ()) -> PromptCoverage | None:
        """What the bot's prompt holds of ``history`` when it answers its last turn; None when the bot reads it
        whole (a script) or cannot tell (a remote server fits the prompt itself)."""
        return None
