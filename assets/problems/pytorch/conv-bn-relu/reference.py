import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Conv2d + BatchNorm2d (inference statistics) + ReLU: BN folds into the conv, ReLU into its store."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        y = F.batch_norm(y, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias,
                         training=False, eps=self.bn.eps)
        return torch.relu(y)


batch_size = 2
in_channels = 3
out_channels = 8
height = 16
width = 16
kernel_size = 3


def get_inputs():
    x = torch.randn(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
