"""Command line: ``python -m serve [--host H] [--port P] [--upstream URL --upstream-model NAME] ...`` (``make serve``).

Loads the generator and the detector, then serves the OpenAI-compatible API with uvicorn on 127.0.0.1 unless told
otherwise. A setting that cannot load (unknown bot, a detector folder that is not there, a bad URL) is one line
``error: ...`` on stderr and exit status 2, before anything listens. Reference: docs/serve.md.
"""

from __future__ import annotations

import argparse
import os
import sys

from bots.base import DEFAULT_PRESET, PRESETS
from guard.judge.policies import REPAIR_FALLBACKS
from guard.vocabulary import GUARD_MODES, GuardMode

UPSTREAM_KEY_ENV = "GUARD_UPSTREAM_API_KEY"


def _filter_on() -> bool:
    from conversation.classroom import filter_on

    return filter_on()


def build_parser() -> argparse.ArgumentParser:
    from serve.app import API_KEY_ENV

    parser = argparse.ArgumentParser(
        prog="python -m serve", description="An OpenAI-compatible chat server whose replies pass the consistency "
        "guard: N candidates from the generator, judged by the detector, one reply chosen by the guard mode.")
    where = parser.add_argument_group("where it listens")
    where.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    where.add_argument("--port", type=int, default=8000)
    where.add_argument("--api-key", default=os.environ.get(API_KEY_ENV) or None,
                       help=f"answer /v1 only with 'Authorization: Bearer KEY' (default: ${API_KEY_ENV}, else none)")
    where.add_argument("--served-model-name", default="consistency-guard", help="the model name /v1/models lists")
    where.add_argument("--max-request-bytes", type=int, default=1_000_000, help="larger requests get HTTP 413")
    where.add_argument("--max-waiting", type=int, default=64,
                       help="requests being answered or waiting at once; more get HTTP 503 (retry)")
    where.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"))

    gen = parser.add_argument_group("where candidates come from")
    gen.add_argument("--bot", default="embedded", help="a bot of this project (python -m bots list); default embedded")
    gen.add_argument("--model", help="the bot's model name or folder (chat, causal, blenderbot)")
    gen.add_argument("--engine", choices=("auto", "ctranslate2", "transformers"), help="local bots' engine")
    gen.add_argument("--script", help="scripted bot: a JSON script (bots/scripted.py) instead of the built-in demo")
    gen.add_argument("--preset", default=DEFAULT_PRESET, choices=list(PRESETS),
                     help="decoding preset; the four options below, then a request's max_tokens, temperature, "
                          "top_k, top_p, repetition_penalty and seed adjust it")
    gen.add_argument("--temperature", type=float, help="sampling temperature (0: greedy, one candidate)")
    gen.add_argument("--top-p", type=float, help="nucleus sampling with this top-p instead of the preset's method")
    gen.add_argument("--top-k", type=int, help="the top-k filter (0: none); with --top-p both filters apply")
    gen.add_argument("--repetition-penalty", type=float,
                     help="> 1 discourages tokens the reply already holds (1: off)")
    gen.add_argument("--upstream", help="an OpenAI-compatible server's base URL (http://127.0.0.1:8080/v1): candidates "
                                        "come from it instead of --bot")
    gen.add_argument("--upstream-model", help="the upstream's model name (default: the first it lists)")
    gen.add_argument("--upstream-api-key", default=os.environ.get(UPSTREAM_KEY_ENV) or None,
                     help=f"bearer key for the upstream (default: ${UPSTREAM_KEY_ENV})")
    gen.add_argument("--upstream-timeout", type=float, default=60.0, help="seconds to wait for the upstream")

    guard = parser.add_argument_group("the guard (a request's 'guard' field overrides these)")
    guard.add_argument("--detector", default="embedded",
                       help="embedded, embedded-cascade, a checkpoint folder, or 'none' (only mode off)")
    guard.add_argument("--threshold", type=float, help="τ (default: the detector's calibrated one)")
    guard.add_argument("--no-prefilter", dest="prefilter", action="store_false",
                       help="pair each reply sentence with every earlier one, not only the most similar ones (the "
                            "detector's prefilter k)")
    guard.add_argument("--mode", default=str(GuardMode.RERANK), choices=[str(m) for m in GUARD_MODES])
    guard.add_argument("--candidates", type=int, default=4, help="candidate replies per request")
    guard.add_argument("--max-candidates", type=int, default=16, help="the most a request may ask for")
    guard.add_argument("--penalty-lambda", type=float, default=1.0)
    guard.add_argument("--repair-fallback", default=str(GuardMode.RERANK), choices=[str(m) for m in REPAIR_FALLBACKS])
    guard.add_argument("--safe-reply", help="what block mode sends when every candidate contradicts")
    guard.add_argument("--class-filter", choices=("on", "off"),
                       default="off" if not _filter_on() else "on",
                       help="the classroom filter: every candidate checked for words a class is not shown, a flagged "
                            "one never sent and masked in the response's 'guard' field (default on; "
                            "GUARD_CLASS_FILTER=0 turns it off too)")
    guard.add_argument("--no-remind", dest="remind", action="store_false",
                       help="never ask the bot again reminded of what it contradicted (guard.judge.reminders); the policy "
                            "alone decides")
    guard.add_argument("--no-memory", dest="memory", action="store_false",
                       help="the bot writes without the facts of the fact sheet the message is about in its prompt "
                            "(guard.judge.memory)")
    return parser


def build_service(args: argparse.Namespace):
    """The loaded service (generator, guard, settings); raises BotError / ModelLoadError / ValueError."""
    from bots.base import preset
    from conversation.records import ChatSettings
    from serve.generators import GeneratorSpec, make_generator
    from serve.protocol import RequestError, adjusted_decoding
    from serve.service import NO_DETECTOR, GuardService

    options = {key: value for key, value in (("model", args.model), ("engine", args.engine),
                                             ("script", args.script)) if value is not None}
    spec = GeneratorSpec(bot=args.bot, options=options, upstream=args.upstream, upstream_model=args.upstream_model,
                         upstream_api_key=args.upstream_api_key, timeout=args.upstream_timeout)
    generator = make_generator(spec)
    guard = None
    if args.detector != NO_DETECTOR:
        from guard.judge.pipeline import load_guard

        guard = load_guard(args.detector, prefilter=bool(args.prefilter))
        if args.prefilter:  # a server loads everything before it answers: no request pays for the embedder's load
            from guard.models.loading import load_embedder

            load_embedder()
    elif args.mode != GuardMode.OFF:
        raise ValueError(f"--detector none allows only --mode off, not {args.mode}")
    threshold = args.threshold  # None: the detector's calibrated τ, resolved by the guard each turn
    if threshold is not None and not 0.0 < threshold < 1.0:
        raise ValueError(f"--threshold must lie strictly between 0 and 1, got {threshold}")
    if not 1 <= args.candidates <= args.max_candidates:
        raise ValueError(f"--candidates must be between 1 and --max-candidates ({args.max_candidates})")
    chosen = {"temperature": args.temperature, "top_k": args.top_k, "top_p": args.top_p,
              "repetition_penalty": args.repetition_penalty}
    try:
        decoding = adjusted_decoding({k: v for k, v in chosen.items() if v is not None}, preset(args.preset))
    except RequestError as exc:  # the request's wording names the field; say the option
        raise ValueError((f"--{exc.param.replace('_', '-')}: " if exc.param else "") + str(exc)) from None
    defaults = ChatSettings(bot=spec.label, preset=args.preset, decoding=decoding,
                            guard_mode=GuardMode(args.mode), detector=args.detector, threshold=threshold,
                            num_candidates=args.candidates, penalty_lambda=args.penalty_lambda,
                            prefilter=bool(args.prefilter), fallback=args.safe_reply,
                            repair_fallback=GuardMode(args.repair_fallback), remind=bool(args.remind),
                            memory=bool(args.memory))
    from conversation.classroom import ClassroomFilter

    return GuardService(generator=generator, generator_label=spec.label, guard=guard, defaults=defaults,
                        max_candidates=args.max_candidates, model_name=args.served_model_name,
                        classroom=ClassroomFilter() if args.class_filter == "on" else None)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub unless the user opts in
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from embedded import configure_openmp

    configure_openmp()  # before torch loads its OpenMP runtime (docs/app.md)
    args = build_parser().parse_args(argv)
    try:
        service = build_service(args)
    except Exception as exc:  # a setting that cannot load: one line, before anything listens
        print(f"error: {' '.join(str(exc).split())[:400] or type(exc).__name__}", file=sys.stderr)
        return 2

    import uvicorn

    from serve.app import ServeConfig, create_app

    app = create_app(service, ServeConfig(api_key=args.api_key, max_request_bytes=args.max_request_bytes,
                                          max_waiting=args.max_waiting))
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
