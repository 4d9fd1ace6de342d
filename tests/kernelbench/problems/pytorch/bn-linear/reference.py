import torch
import torch.nn as nn

batch_size = 32
in_features = 48
out_features = 24


class Model(nn.Module):
    """Linear, BatchNorm1d, ReLU: in training mode the norm uses the batch's statistics."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        return torch.relu(self.norm(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features) * 3 + 1]


def get_init_inputs():
    return [in_features, out_features]
