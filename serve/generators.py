"""Where the guard server's candidates come from: a bot of this project, or any OpenAI-compatible server upstream.

Both are ``bots.base.Bot``s built by ``bots.registry.make_bot``, so the server guards them exactly as the chat page
does. A local bot runs on this machine's CPU and keeps engine state (prefix caches) between calls; requests that
arrive together take turns on its engine (``embedded.turns``), as the chat page's sessions do. An upstream server
(vLLM, llama.cpp server, Ollama, another guard server) is the ``remote`` bot: asked for ``n`` candidates in one
request where it supports that, else one request per candidate (bots/remote.py), and concurrent requests go to it
concurrently: it is scaled on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from bots.base import Bot, BotError
from bots.registry import make_bot


@dataclass
class GeneratorSpec:
    """The command line's choice of generator: ``bot`` with its factory's ``options``, or an ``upstream`` URL."""

    bot: str = "embedded"
    options: dict = field(default_factory=dict)  # model=, engine=, script= ... for bots.registry.make_bot
    upstream: str | None = None  # base URL of an OpenAI-compatible server; replaces ``bot``
    upstream_model: str | None = None  # None: the first model the upstream lists
    upstream_api_key: str | None = None
    timeout: float = 60.0  # seconds to wait for the upstream

    @property
    def label(self) -> str:
        """How the reports name the generator: the bot's name, or "upstream <url>"."""
        return f"upstream {upstream_base_url(self.upstream)}" if self.upstream else self.bot


def upstream_base_url(url: str) -> str:
    """The upstream's OpenAI base URL: as given (``http://host:8000/v1``), with ``/v1`` added when it names only
    the server (``http://host:8000``), since vLLM, llama.cpp's server and Ollama all serve the API there."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BotError(f"--upstream must be an http(s) URL such as http://127.0.0.1:8000/v1, got {url!r}")
    path = parts.path.rstrip("/") or "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def make_generator(spec: GeneratorSpec) -> Bot:
    """The bot the server asks for candidates. The upstream gets the client's own system text (the persona lines)
    as its system message, not this project's chat prompt: the guard in front of a bot does not change what the
    bot is told."""
    if spec.upstream:
        return make_bot("remote", base_url=upstream_base_url(spec.upstream), model=spec.upstream_model,
                        api_key=spec.upstream_api_key, timeout=spec.timeout, system_prompt=None)
    return make_bot(spec.bot, **spec.options)


def is_upstream(bot: Bot) -> bool:
    """Whether candidates come over the network (its failures are the upstream's: HTTP 502)."""
    from bots.remote import RemoteChatBot

    return isinstance(bot, RemoteChatBot)
