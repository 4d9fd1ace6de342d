import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer followed by ReLU: a GEMM whose bias and activation can ride along in the epilogue."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


batch_size = 32
in_features = 64
out_features = 48


def get_inputs():
    x = torch.randn(batch_size, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
