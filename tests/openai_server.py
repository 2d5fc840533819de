"""A small OpenAI-chat-API server for the remote-bot tests (real HTTP on 127.0.0.1, deterministic replies).

Run: python tests/openai_server.py [--ignore-n | --refuse-n] [--no-logprobs] [--delay S] [--fail 500|json] [--log FILE]
It binds a free port and prints "PORT <n>" on its first stdout line. Each reply is
"reply <i> to <last user text>"; token i of choice c has log-probability -(c + 1) / 10, so the
mean log-probability of choice c is -(c + 1) / 10 and tests can check the scores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL_ID = "tiny-test-model"


def make_handler(options: argparse.Namespace):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep the test output clean
            pass

        def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, json.dumps({"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]}).encode())
            else:
                self._send(404, b'{"error": "not found"}')

        def do_POST(self):
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b'{"error": "not found"}')
                return
            payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            if options.log:
                with open(options.log, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(payload) + "\n")
            if options.delay:
                time.sleep(options.delay)
            if options.fail == "500":
                self._send(500, b'{"error": "model crashed"}')
                return
            if options.fail == "json":
                self._send(200, b"<html>not json</html>", "text/html")
                return
            if options.refuse_n and int(payload.get("n", 1)) > 1:  # like the guard server (serve): one reply only
                self._send(400, b'{"error": {"message": "\'n\' must be 1", "type": "invalid_request_error"}}')
                return
            last_user = next((m["content"] for m in reversed(payload.get("messages", [])) if m["role"] == "user"), "")
            n = 1 if options.ignore_n else int(payload.get("n", 1))
            choices = []
            for index in range(n):
                text = f"reply {index} to {last_user}"
                limit = int(payload.get("max_tokens", 16))
                words = text.split()[:limit]
                choice = {"index": index, "message": {"role": "assistant", "content": " ".join(words)},
                          "finish_reason": "length" if len(text.split()) > limit else "stop"}
                if payload.get("logprobs") and not options.no_logprobs:
                    choice["logprobs"] = {"content": [
                        {"token": word, "logprob": -(index + 1) / 10, "top_logprobs": []} for word in words
                    ]}
                choices.append(choice)
            body = {"id": "chatcmpl-test", "object": "chat.completion", "model": payload.get("model"),
                    "choices": choices}
            self._send(200, json.dumps(body).encode())

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ignore-n", action="store_true", help="answer one choice whatever n asks (like llama.cpp)")
    parser.add_argument("--refuse-n", action="store_true", help="answer HTTP 400 to n > 1 (like the guard server)")
    parser.add_argument("--no-logprobs", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--fail", choices=("500", "json"))
    parser.add_argument("--log", help="append every request body as a JSON line")
    options = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(options))
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
