"""Defines no ModelNew. Verdict: load_error."""
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * (x > 0)
