import torch
import torch.nn as nn

M = 100
N = 60


class Model(nn.Module):
    """Out-of-place 2-D transpose: pure data movement where reads and writes cannot both be contiguous."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


def get_inputs():
    x = torch.randn(M, N)
    return [x]


def get_init_inputs():
    return []
