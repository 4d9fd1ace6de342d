import torch
import torch.nn as nn

m = 512
n = 512
k = 512


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b).mean(dim=1)


def get_inputs():
    return [torch.randn(m, k), torch.randn(k, n)]


def get_init_inputs():
    return []
