import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product: every element of A is used once, so it runs at DRAM bandwidth or not at all."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 64
K = 256


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, 1)
    return [A, B]


def get_init_inputs():
    return []
