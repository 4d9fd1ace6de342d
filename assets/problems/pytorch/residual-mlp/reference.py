import torch
import torch.nn as nn


class Model(nn.Module):
    """Residual MLP block: two GEMMs whose bias, ReLU and residual add all fit in the GEMM epilogues."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(torch.relu(self.fc1(x)))


batch_size = 16
dim = 32
hidden = 64


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [dim, hidden]
