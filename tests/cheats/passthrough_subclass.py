"""Subclasses the reference and adds nothing. Caught by: static 'reference-subclass'."""
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    pass
