import torch
import torch.nn as nn

M = 64
N = 48
K = 80


class Model(nn.Module):
    """Single-precision GEMM C = A @ B: the canonical compute-bound kernel."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []
