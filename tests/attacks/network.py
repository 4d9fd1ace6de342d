"""Connects to a server on the host's loopback (the test's) and to the outside, by IP; reports either."""
import socket

import torch

reached = []
for address in (("127.0.0.1", __PORT__), ("1.1.1.1", 53), ("::1", __PORT__)):
    try:
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(address)
            s.sendall(b"__MARKER__")
            reached.append(str(address))
    except OSError as exc:
        reached.append(f"{address} failed: {exc}")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        raise RuntimeError("NET:" + " | ".join(reached))
