"""The byte both sides agree marks memory the candidate never wrote.

The runner fills its allocator's free blocks and a C candidate's output buffers with it before each
call; the judge recognises it in what comes back, so an output that was never written fails, and the
message says so. In every float type a tensor of these bytes is NaN, so it can never pass.
"""

from __future__ import annotations

import torch

POISON_BYTE = 0xFF


def poison_(tensor: torch.Tensor) -> torch.Tensor:
    """Fill a tensor's bytes with POISON_BYTE in place."""
    tensor.reshape(-1).view(torch.uint8).fill_(POISON_BYTE)
    return tensor


def poisoned_mask(t: torch.Tensor) -> torch.Tensor:
    """Elements whose bytes are all POISON_BYTE (float types only: for ints the pattern is a real value)."""
    if not t.is_floating_point():
        return torch.zeros(t.shape, dtype=torch.bool, device=t.device)
    bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
    return t.contiguous().view(bits) == -1
