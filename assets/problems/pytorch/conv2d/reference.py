import torch
import torch.nn as nn

batch_size = 2
in_channels = 3
out_channels = 8
height = 16
width = 16
kernel_size = 3


class Model(nn.Module):
    """Direct 2-D convolution with few channels: too small for GEMM lowering to pay, heavy on data reuse."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
