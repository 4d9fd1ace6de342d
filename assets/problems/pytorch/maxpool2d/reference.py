import torch
import torch.nn as nn

batch_size = 2
channels = 3
height = 16
width = 16
kernel_size = 2
stride = 2
padding = 0


class Model(nn.Module):
    """2-D max pooling: overlapping windows (kernel > stride) make the same input feed several outputs."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size, stride, padding]
