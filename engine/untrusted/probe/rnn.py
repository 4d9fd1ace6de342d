"""Recurrent layers on meta tensors, answered from their shapes.

Meta tensors have no fused LSTM/GRU/RNN kernel, so torch unrolls every time step of every layer into
small ops, each through Python: tens of seconds for a six-layer LSTM over 512 steps, against a
millisecond for a convolution. The layer's module has already checked its input and hidden sizes when
it reaches `torch._VF`, and the result's shapes follow from those, so while a probe runs on meta
tensors the four unpacked `_VF` calls return empty meta tensors of the right shapes and add the
layer's matrix FLOPs to the probe's count. Any other call (real tensors, packed sequences) goes to torch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

CALLS = ("lstm", "gru", "rnn_tanh", "rnn_relu")


def _flops(inputs: torch.Tensor, weights: list[torch.Tensor]) -> int:
    """Every weight matrix multiplies every token once (2 FLOPs a weight), every bias is added once."""
    tokens = inputs.numel() // max(inputs.shape[-1], 1)
    matrices = sum(w.numel() for w in weights if w.dim() == 2)
    biases = sum(w.numel() for w in weights if w.dim() == 1)
    return tokens * (2 * matrices + biases)


def _shortcut(name: str, original, counter):
    def call(*args, **kwargs):
        # Unpacked form: (input, hx, flat_weights, has_biases, num_layers, dropout, train, bidirectional,
        # batch_first); the packed form has the batch sizes second and the hidden state third.
        if kwargs or len(args) != 9 or not isinstance(args[2], list | tuple):
            return original(*args, **kwargs)
        inputs, hx, weights = args[0], args[1], list(args[2])
        states = list(hx) if isinstance(hx, list | tuple) else [hx]
        if not all(isinstance(t, torch.Tensor) and t.device.type == "meta" for t in [inputs, *states]):
            return original(*args, **kwargs)
        directions = 2 if args[7] else 1
        out = torch.empty((*inputs.shape[:-1], directions * states[0].shape[-1]), dtype=inputs.dtype,
                          device="meta")
        if counter is not None:
            counter.flops += _flops(inputs, weights)
        return (out, *[torch.empty_like(s) for s in states])

    call.__name__ = name
    return call


@contextlib.contextmanager
def rnn_on_meta(counter=None) -> Iterator[None]:
    """While inside: recurrent layers given meta tensors answer from shapes (FLOPs into `counter.flops`)."""
    vf = torch._VF
    saved = {name: vf.__dict__.get(name) for name in CALLS}
    for name in CALLS:
        setattr(vf, name, _shortcut(name, getattr(torch._C._VariableFunctions, name), counter))
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is None:
                vf.__dict__.pop(name, None)
            else:
                setattr(vf, name, previous)
