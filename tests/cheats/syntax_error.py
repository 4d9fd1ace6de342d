"""Not valid Python. Verdict: load_error."""
import torch

class ModelNew(torch.nn.Module)
    def forward(self, x):
        return x
