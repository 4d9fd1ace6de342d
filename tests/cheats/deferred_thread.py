"""Leaves a background thread running to do work outside the timed region. Caught by: runtime 'threads';
static 'threads' is evidence."""
import threading
import time

import torch

_worker = None


def _spin():
    while True:
        time.sleep(0.01)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        global _worker
        if _worker is None:
            _worker = threading.Thread(target=_spin, daemon=True)
            _worker.start()
        return x * (x > 0)
