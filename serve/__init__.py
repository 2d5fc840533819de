"""The guard as an OpenAI-compatible server: ``python -m serve`` (``make serve``).

A client sends the whole conversation (``POST /v1/chat/completions``, as to any OpenAI-compatible server); the
server gets N candidate replies from its generator (a bot of this project, the embedded SmolLM2 by default, or
any OpenAI-compatible server upstream), guards them with the configured detector and mode, and answers with the
reply the policy chose plus the guard's report in an extra ``guard`` field. Nothing is kept between requests, so
replicas can sit behind any load balancer. It sits above ``bots`` and ``guard`` and talks to them through
``conversation.guarding``; nothing below imports it (tests/test_layering.py).

* ``serve.protocol``    the wire format: request checks with errors that say what to fix, response bodies,
  server-sent-event chunks, the ``guard`` field
* ``serve.generators``  where candidates come from: a local bot (taking turns on the CPU) or an upstream server
* ``serve.service``     one guarded answer per request: the one call into ``conversation.guarding``
* ``serve.app``         the FastAPI application: routes, API key, size limit, errors
* ``serve.__main__``    the command line (uvicorn)

Reference: docs/serve.md.
"""
