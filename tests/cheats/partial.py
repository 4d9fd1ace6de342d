"""Computes only the first half of the rows. Caught by: correctness (incorrect, first mismatching index)."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.zeros_like(x)
        half = x.shape[0] // 2
        y[:half] = x[:half] * (x[:half] > 0)
        return y
