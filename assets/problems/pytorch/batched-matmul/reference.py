import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix multiply: many independent mid-sized GEMMs, each too small to fill the GPU alone."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 2
m = 16
k = 32
n = 24


def get_inputs():
    A = torch.randn(batch_size, m, k)
    B = torch.randn(batch_size, k, n)
    return [A, B]


def get_init_inputs():
    return []
