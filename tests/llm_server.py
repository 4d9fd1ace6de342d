"""A small OpenAI-compatible chat-completions server on loopback for the LLM proposer's tests.

The requested model name picks the behaviour: good, nocode, several, truncated, error500, slow,
ratelimit-once (429 on the first call, then a good reply).
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

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(request)
        model = request["model"]
        if model == "error500":
            return self._send(500, {"error": {"message": "backend exploded", "type": "server_error"}})
        if model == "unauthorized":
            return self._send(401, {"error": {"message": "invalid api key", "type": "invalid_request_error"}})
        if model == "ratelimit-once" and sum(r["model"] == model for r in self.server.requests) == 1:
            return self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}})
        if model == "slow":
            time.sleep(3)
        content, finish = {
            "nocode": ("I would use shared memory, but here is no code.", "stop"),
            "several": (GOOD_CODE + "\nor\n" + GOOD_CODE.replace("return x", "return x * 1"), "stop"),
            "truncated": (GOOD_CODE[:200], "length"),
        }.get(model, ("Use one thread per element.\n" + GOOD_CODE, "stop"))
        self._send(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 321, "completion_tokens": 123, "total_tokens": 444},
        })


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list


def start_server() -> tuple[_Server, str]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.requests = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
