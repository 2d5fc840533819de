"""Any OpenAI-compatible chat server (vLLM, llama.cpp server, Ollama, ...) as a bot.

One POST /chat/completions asks for ``n`` choices with ``logprobs``; a server that answers one choice however many
were asked for (llama.cpp's server) or refuses ``n`` > 1 with HTTP 400 or 422 (the guard server, ``serve``, answers
one reply) is asked for one candidate a request from then on, the missing ones at once: concurrent requests, which a
server with parallel slots (llama.cpp's ``--parallel``) decodes side by side.
Scores: the mean of the returned token log-probabilities; a server that returns no logprobs
(Ollama's OpenAI endpoint, older llama.cpp) gives every candidate score 0.0, so they tie and
the guard's decision alone orders them. Beam search is not part of the OpenAI API and is refused.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import requests

from bots.base import (
    DEFAULT_SAMPLE_RANK_SAMPLES,
    SYSTEM_PROMPT,
    Bot,
    BotError,
    Candidate,
    DecodingConfig,
    chat_messages,
    check_history,
    complete_sentences,
)
from guard.records import Turn

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
#: Where the remote bot goes when no base URL is given (the chat app's "remote" bot, ``python -m bots``):
#: a school's one bot engine for every app replica (docs/deploy.md)
URL_ENV = "GUARD_REMOTE_URL"
#: Extra requests allowed when a server returns fewer choices than asked for.
MAX_REQUESTS = 8


class ServerStatusError(BotError):
    """The chat server answered with an HTTP error status (``status``)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class RemoteChatBot(Bot):
    """Chat completions over HTTP at ``base_url`` (None: ``GUARD_REMOTE_URL``, else ``DEFAULT_BASE_URL``);
    ``model=None`` takes the first model the server lists. ``system_prompt=None``
    sends the persona lines as the system message itself (``bots.base.chat_messages``)."""

    def __init__(self, base_url: str | None = None, model: str | None = None, timeout: float = 30.0,
                 api_key: str | None = None, system_prompt: str | None = SYSTEM_PROMPT, name: str = "remote"):
        base_url = base_url or os.environ.get(URL_ENV, "").strip() or DEFAULT_BASE_URL
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.system_prompt = system_prompt
        self.name = name
        self.session = requests.Session()
        if api_key:
            self.session.headers["Authorization"] = f"Bearer {api_key}"
        self._model = model
        self.accepts_n = True  # False once the server refused n > 1: one candidate a request from then on

    @property
    def model(self) -> str:
        if self._model is None:
            listing = self._request("GET", "/models")
            try:
                self._model = str(listing["data"][0]["id"])
            except (KeyError, IndexError, TypeError):
                raise BotError(f"{self.base_url}/models lists no model; pass --model NAME") from None
        return self._model

    def _request(self, method: str, path: str, payload: dict | None = None) -> dict:
        url = self.base_url + path
        try:
            response = self.session.request(method, url, json=payload, timeout=self.timeout)
        except requests.exceptions.Timeout:
            raise BotError(f"the chat server at {url} did not answer within {self.timeout:g} s") from None
        except requests.exceptions.ConnectionError:
            raise BotError(f"cannot reach a chat server at {url}: is it running, and is that the right URL?") from None
        except requests.exceptions.RequestException as exc:
            raise BotError(f"request to {url} failed: {exc}") from None
        if response.status_code >= 400:
            raise ServerStatusError(f"the chat server at {url} answered HTTP {response.status_code}: "
                                    f"{response.text[:200]!r}", response.status_code)
        try:
            body = response.json()
        except ValueError:
            raise BotError(f"the chat server at {url} did not answer with JSON: {response.text[:200]!r}") from None
        if not isinstance(body, dict):
            raise BotError(f"the chat server at {url} answered {type(body).__name__}, expected a JSON object")
        return body

    def payload(self, history: Sequence[Turn], persona: Sequence[str], decoding: DecodingConfig, n: int,
                memory: Sequence[str] = ()) -> dict:
        body: dict = {
            "model": self.model,
            "messages": chat_messages(history, persona, self.system_prompt, memory),
            "n": n,
            "max_tokens": decoding.max_new_tokens,
            "logprobs": True,
        }
        if decoding.method == "greedy":
            body["temperature"] = 0.0
        else:
            body["temperature"] = decoding.temperature
            top_k, top_p = decoding.filters
            if top_p < 1.0:
                body["top_p"] = top_p
            if top_k:
                body["top_k"] = top_k  # extension accepted by vLLM, llama.cpp and Ollama
        if decoding.seed is not None:
            body["seed"] = decoding.seed
        if decoding.min_new_tokens:
            body["min_tokens"] = decoding.min_new_tokens  # vLLM extension; others ignore it
        return body

    #: the memory goes to the server as the last system message (``bots.base.chat_messages``)
    reads_memory = True

    def generate(self, history: list[Turn], num_candidates: int, decoding: DecodingConfig | None = None,
                 persona: Sequence[str] = (), memory: Sequence[str] = ()) -> list[Candidate]:
        history = check_history(history)
        decoding = decoding or self.default_decoding
        if decoding.method == "beam":
            raise BotError("the OpenAI chat API has no beam search; use greedy, top_k, top_p or sample_rank")
        if num_candidates < 1:
            raise BotError("num_candidates must be >= 1")
        wanted = 1 if decoding.method == "greedy" else num_candidates
        if decoding.method == "sample_rank":
            wanted = max(decoding.num_samples or DEFAULT_SAMPLE_RANK_SAMPLES, num_candidates)
        candidates: list[Candidate] = []
        attempt = 0
        while attempt < MAX_REQUESTS and len(candidates) < wanted:
            if self.accepts_n or not candidates:
                n = wanted - len(candidates) if self.accepts_n else 1
                try:
                    body = self._request("POST", "/chat/completions",
                                         self.payload(history, persona, _seeded(decoding, attempt), n, memory))
                except ServerStatusError as exc:
                    if n == 1 or exc.status not in (400, 422):
                        raise
                    self.accepts_n = False  # it refuses several choices in one answer: ask for one at a time
                    body = self._request("POST", "/chat/completions",
                                         self.payload(history, persona, _seeded(decoding, attempt), 1, memory))
                got = _parse_choices(body, self.base_url)
                candidates.extend(got)
                attempt += 1
                if len(got) < n and len(got) <= 1:  # it answers one choice a request: ask for the rest at once
                    self.accepts_n = False
                continue
            # one choice a request (llama.cpp's server, the guard server): the missing ones asked for together, so a
            # server with parallel slots decodes them side by side instead of one after another
            missing = min(wanted - len(candidates), MAX_REQUESTS - attempt)
            with ThreadPoolExecutor(max_workers=missing) as pool:
                bodies = list(pool.map(lambda k: self._request("POST", "/chat/completions", self.payload(
                    history, persona, _seeded(decoding, k), 1, memory)), range(attempt, attempt + missing)))
            for body in bodies:
                candidates.extend(_parse_choices(body, self.base_url))
            attempt += missing
        if not candidates:
            raise BotError(f"the chat server at {self.base_url} returned no candidates")
        candidates = candidates[:wanted]
        candidates.sort(key=lambda c: c.score, reverse=True)
        keep = 1 if decoding.method == "greedy" else num_candidates
        return candidates[:keep]


def _seeded(decoding: DecodingConfig, attempt: int) -> DecodingConfig:
    """The decoding of the request ``attempt`` of one generation: a seed moves on by one a request (the same seed
    would repeat the same sample)."""
    return decoding.replace(seed=decoding.seed + attempt) if decoding.seed is not None and attempt else decoding


def _parse_choices(body: dict, base_url: str) -> list[Candidate]:
    choices = body.get("choices")
    if not isinstance(choices, list):
        raise BotError(f"the chat server at {base_url} answered without a 'choices' list: {str(body)[:200]!r}")
    parsed = []
    for choice in choices:
        try:
            text = choice["message"]["content"]
        except (KeyError, TypeError):
            raise BotError(f"the chat server at {base_url} sent a choice without message.content") from None
        if not isinstance(text, str):
            raise BotError(f"the chat server at {base_url} sent non-text content")
        cut = choice.get("finish_reason") == "length"  # the server stopped at max_tokens
        parsed.append(Candidate(text=complete_sentences(text, cut=cut), score=_mean_logprob(choice.get("logprobs"))))
    return parsed


def _mean_logprob(logprobs) -> float:
    """Mean token log-probability from an OpenAI ``logprobs`` object; 0.0 when the server sent none."""
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else None
    values = [t.get("logprob") for t in content or [] if isinstance(t, dict)]
    values = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    return sum(values) / len(values) if values else 0.0
