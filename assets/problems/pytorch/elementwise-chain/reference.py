import torch
import torch.nn as nn


class Model(nn.Module):
    """Gated activation chain: eager PyTorch makes one memory pass per op, so fusion is the whole game."""

    def __init__(self, scale: float, bias: float):
        super().__init__()
        self.scale = scale
        self.bias = bias

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x * self.scale + self.bias) * torch.sigmoid(y)


batch_size = 16
dim = 1024
scale = 0.75
bias = 0.1


def get_inputs():
    x = torch.randn(batch_size, dim)
    y = torch.randn(batch_size, dim)
    return [x, y]


def get_init_inputs():
    return [scale, bias]
