import torch
import torch.nn as nn

batch_size = 16
dim = 1000


class Model(nn.Module):
    """Inclusive prefix sum over the last dim: a loop-carried dependence that needs a parallel scan."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
