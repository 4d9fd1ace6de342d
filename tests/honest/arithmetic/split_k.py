"""Honest: K split into chunks of 4096, each a partial product, the partials added in fp32 in reverse order
(split-K with a final reduction, as atomics may add them)."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        parts = [a[:, k:k + 4096] @ b[k:k + 4096] for k in range(0, a.shape[1], 4096)]
        out = torch.zeros_like(parts[0])
        for part in reversed(parts):
            out = out + part
        return out
