import torch
import torch.nn as nn

batch_size = 16
features = 64


class Model(nn.Module):
    """Linear then dropout: in training mode the output depends on the random numbers drawn."""

    def __init__(self, features, p):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.dropout = nn.Dropout(p)

    def forward(self, x):
        return self.dropout(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features, 0.5]
