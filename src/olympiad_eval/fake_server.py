"""A local OpenAI-compatible chat server that answers deterministically, for tests and dry runs.

Real HTTP on 127.0.0.1, so the real `openai` client is exercised end to end. It records every
request it receives. Run it by hand with `python -m olympiad_eval.fake_server --port 8000`.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Responder = Callable[[dict], "str | tuple[int, dict]"]

JUDGE_MARKER = "solution judge"


def default_responder(body: dict) -> str:
    """A judge prompt gets a JSON verdict; anything else gets an answer in every format we parse."""
    text = json.dumps(body["messages"], ensure_ascii=False)
    if JUDGE_MARKER in text:
        return json.dumps({"verdict": "correct", "reasoning": "The final result matches the reference."})
    return "<think>\nA guess.\n</think>\n<answer>\n[\\boxed{42}]\n</answer>\nANSWER: A\nFINAL ANSWER: 42"


class FakeOpenAI:
    """`with FakeOpenAI() as server:` serves on `server.base_url` until the block ends."""

    def __init__(self, responder: Responder = default_responder, port: int = 0):
        self.responder = responder
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def count(self, predicate: Callable[[dict], bool] = lambda body: True) -> int:
        with self._lock:
            return sum(1 for body in self.requests if predicate(body))

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = server.responder(body)
                status, payload = reply if isinstance(reply, tuple) else (200, _completion(body, reply))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _completion(body: dict, text: str) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8000)
    port = parser.parse_args().port
    with FakeOpenAI(port=port) as server:
        print(f"serving on {server.base_url} (Ctrl-C to stop)")
        threading.Event().wait()


if __name__ == "__main__":
    main()
