"""Returns a tensor subclass that would compute only when inspected. Caught by: static 'tensor-subclass'."""
import torch


class LazyRelu(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return (x * (x > 0)).as_subclass(LazyRelu)
