"""Subclasses the reference and adds nothing. Caught by: runtime 'torch-op' (on a GPU 'kernel-coverage');
static 'reference-subclass' is evidence."""
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ModelNew(Model):
    pass
