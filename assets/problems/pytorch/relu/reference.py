import torch
import torch.nn as nn

batch_size = 16
dim = 1024


class Model(nn.Module):
    """ReLU: one read and one write per element, the pure bandwidth baseline."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
