"""Starts 200 processes in new sessions, each ignoring SIGTERM and living for ten minutes, then returns
zeros: they must not outlive the job."""
import subprocess

import torch

for _ in range(200):
    try:
        subprocess.Popen(["/bin/sh", "-c", "trap '' TERM HUP; exec -a __MARKER__ sleep 600"],
                         start_new_session=True)
    except OSError:
        break


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
