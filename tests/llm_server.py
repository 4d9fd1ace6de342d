"""A small OpenAI-compatible chat-completions server on loopback for the LLM proposer's tests.

The requested model name picks the behaviour: good, nocode, several, truncated, refusal, think (separate
reasoning deltas), think-tags (a <think> block in the content, with a decoy code block inside it),
error500, unauthorized, slow, slow-first (a second before the first streamed token), delay-SECONDS,
ratelimit-once (429 on the first call, then a good reply), and samples-SPEC: one entry per sample of a step
(`DELAY`, `DELAY:nocode` or `DELAY:error500`, comma-separated; the sample is the request's seed modulo 1000,
as the proposer seeds it), each good reply with code of its own (it names its sample). The server records
when each such reply starts, its delay over (`replied`: (sample, time.perf_counter())): nothing built from it
can start earlier. Replies stream when the request asks.
A test double: its replies are fixed text, never a model's output.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GOOD_CODE = '''```python
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void relu_kernel(const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
"""

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x
```'''


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        """GET /v1/models, as OpenAI-compatible servers list what they serve."""
        if not self.path.rstrip("/").endswith("/models"):
            return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        self._send(200, {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "loopback"}
                                                    for name in ("good", "think", "delay-0.5")]})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(request)
        model = request["model"]
        if model.startswith("samples-"):
            return self._sample(request, model.removeprefix("samples-").split(","))
        self._answer(request, model)

    def _sample(self, request: dict, spec: list[str]) -> None:
        """One sample of a step, as `samples-SPEC` says: its own delay, then a good reply with its own code,
        no code, or a server error."""
        sample = request.get("seed", 0) % 1000
        delay, _, kind = spec[sample % len(spec)].partition(":")
        time.sleep(float(delay))
        self.server.replied.append((sample, time.perf_counter()))
        if kind in ("error500", "nocode"):
            self._answer(request, kind)
        else:
            own = GOOD_CODE.replace("return x", f"return x  # sample {sample}")
            self._answer(request, "good", content=(f"Sample {sample}.\n{own}", "stop"))

    def _answer(self, request: dict, model: str, content: tuple[str, str] | None = None) -> None:
        if model == "error500":
            return self._send(500, {"error": {"message": "backend exploded", "type": "server_error"}})
        if model == "unauthorized":
            return self._send(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
        if model == "ratelimit-once" and sum(r["model"] == model for r in self.server.requests) == 1:
            return self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}})
        if model == "slow":
            time.sleep(3)
        if model.startswith("delay-"):  # a fixed time per request, as a loaded server takes (benchmarks)
            time.sleep(float(model.removeprefix("delay-")))
        content, finish = content or {
            "nocode": ("I would use shared memory, but here is no code.", "stop"),
            "several": (GOOD_CODE + "\nor\n" + GOOD_CODE.replace("return x", "return x * 1"), "stop"),
            "truncated": (GOOD_CODE[:200], "length"),
            "refusal": ("I can't help with writing that kernel.", "stop"),
            "think-tags": ("<think>Thinking: elementwise and bandwidth-bound. ```python\nclass Fake: pass\n"
                           "```</think>\nHere it is.\n" + GOOD_CODE, "stop"),
        }.get(model, ("Use one thread per element.\n" + GOOD_CODE, "stop"))
        reasoning = "Thinking: elementwise and bandwidth-bound, so no shared memory." \
            if model == "think" else ""
        if request.get("stream"):
            return self._stream(model, content, reasoning, finish, first_delay=1.0 if model == "slow-first" else 0.0)
        message = {"role": "assistant", "content": content, **({"reasoning_content": reasoning} if reasoning else {})}
        self._send(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 321, "completion_tokens": 123, "total_tokens": 444},
        })

    def _stream(self, model: str, content: str, reasoning: str, finish: str, first_delay: float) -> None:
        """Server-sent events as OpenAI-compatible servers send them: reasoning deltas, content deltas a few
        characters at a time, the finish reason, the usage (asked with stream_options), then [DONE]."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(first_delay)

        def event(choices: list, usage: dict | None = None) -> None:
            body = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": model, "choices": choices, **({"usage": usage} if usage else {})}
            self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
            self.wfile.flush()

        for k in range(0, len(reasoning), 16):
            event([{"index": 0, "delta": {"reasoning_content": reasoning[k:k + 16]}, "finish_reason": None}])
        for k in range(0, len(content), 24):
            event([{"index": 0, "delta": {"content": content[k:k + 24]}, "finish_reason": None}])
        event([{"index": 0, "delta": {}, "finish_reason": finish}])
        event([], {"prompt_tokens": 321, "completion_tokens": 123, "total_tokens": 444})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list
    replied: list


def start_server() -> tuple[_Server, str]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.requests = []
    server.replied = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
