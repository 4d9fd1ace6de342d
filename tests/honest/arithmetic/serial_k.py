"""Honest: one running fp32 sum over K per output, in order (a naive kernel's loop)."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return (a[:, :, None] * b[None, :, :]).cumsum(dim=1)[:, -1, :]
