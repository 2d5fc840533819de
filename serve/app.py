"""The guard server's FastAPI application: ``POST /v1/chat/completions``, ``GET /v1/models``, ``GET /health``.

Requests are read here under a size limit, checked by ``serve.protocol``, answered by ``serve.service`` in a worker
thread (generation and detection are blocking CPU or network work) and written back as JSON or server-sent
events. With an API key, ``/v1`` answers only requests carrying ``Authorization: Bearer <key>`` (as vLLM's server
does); ``/health`` stays open for load balancers. Every refusal is an OpenAI-style error body with a message that
says what to fix, whatever raised it (a check, a route that does not exist, a bug).
"""

from __future__ import annotations

import hmac
import logging
import time
from dataclasses import dataclass

from fastapi import Depends, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException  # what the router raises for 404 / 405 (FastAPI's subclasses it)

from serve.protocol import (
    RequestError,
    completion_body,
    error_body,
    models_body,
    parse_chat_request,
    parse_json,
    stream_events,
)
from serve.service import GuardService

log = logging.getLogger("serve")
API_KEY_ENV = "GUARD_SERVE_API_KEY"


@dataclass
class ServeConfig:
    """How the server meets its clients: the key it asks for, the largest request, how many may wait."""

    api_key: str | None = None  # None: no key needed
    max_request_bytes: int = 1_000_000
    max_waiting: int = 64  # requests being answered or waiting for the CPU; more get HTTP 503


def create_app(service: GuardService, config: ServeConfig | None = None) -> FastAPI:
    """The application over a loaded ``service`` (models are loaded before the first request, not during it)."""
    config = config or ServeConfig()
    app = FastAPI(title="Consistency guard", summary="An OpenAI-compatible chat server that guards its replies "
                  "against contradicting what the bot said before.", version="1")
    started = int(time.time())
    waiting = 0

    @app.exception_handler(RequestError)
    async def refused(_: Request, exc: RequestError) -> JSONResponse:
        headers = {401: {"WWW-Authenticate": "Bearer"}, 503: {"Retry-After": "1"}}.get(exc.status)
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        message = {404: f"no route {request.url.path}: the API is POST /v1/chat/completions and GET /v1/models",
                   405: f"{request.method} is not allowed on {request.url.path}"}.get(exc.status_code, str(exc.detail))
        return JSONResponse(error_body(message, "invalid_request_error" if exc.status_code < 500 else "server_error"),
                            status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return JSONResponse(error_body(f"internal error ({type(exc).__name__}): {exc}; nothing was stored, the "
                                       "request can be sent again", "server_error"), status_code=500)

    def check_key(request: Request) -> None:
        if not config.api_key:
            return
        header = request.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        if not header or scheme.lower() != "bearer" or not key.strip():
            raise RequestError(401, "missing API key: send the header 'Authorization: Bearer <key>' with the key this "
                                    f"server was started with (--api-key or {API_KEY_ENV})", code="invalid_api_key")
        if not hmac.compare_digest(key.strip().encode(), config.api_key.encode()):
            raise RequestError(401, "wrong API key: the bearer token is not this server's key", code="invalid_api_key")

    @app.get("/health")
    async def health() -> dict:
        """Up and loaded (models load before the server listens); open without a key, for load balancers."""
        guard = service.guard
        return {"status": "ok", "model": service.model_name, "generator": service.generator_label,
                "detector": None if guard is None else guard.name}

    @app.get("/v1/models", dependencies=[Depends(check_key)])
    async def models() -> dict:
        return models_body(service.model_name, started)

    @app.post("/v1/chat/completions", dependencies=[Depends(check_key)])
    async def chat_completions(request: Request):
        nonlocal waiting
        body = await _read_body(request, config.max_request_bytes)
        chat = parse_chat_request(parse_json(body), service.defaults, service.max_candidates)
        if waiting >= config.max_waiting:
            raise RequestError(503, f"the server is busy: {waiting} requests are being answered or waiting; send "
                                    "this one again in a moment (nothing was stored)")
        waiting += 1
        try:
            turn = await run_in_threadpool(service.answer, chat)
        finally:
            waiting -= 1
        if chat.stream:
            return StreamingResponse(stream_events(chat, turn, service.model_name), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        return JSONResponse(completion_body(chat, turn, service.model_name))

    return app


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to be over ``limit`` bytes (declared or counted)."""
    def too_large(size: str) -> RequestError:
        return RequestError(413, f"the request is {size} bytes, over this server's limit of {limit} bytes "
                                 "(--max-request-bytes): send a shorter conversation, e.g. without its oldest turns",
                            param="messages", code="request_too_large")

    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(declared)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(f"over {limit}")
        chunks.append(chunk)
    return b"".join(chunks)
