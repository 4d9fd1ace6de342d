"""Whether a candidate's outputs carry the reference's own rounding: the judge's own observation of a
candidate that replays the reference's ops.

Which ops a candidate called is reported by its own process (a profile it can forge, or a path it takes
only while profiled), so that report can flag a candidate but never clear one. What the judge sees itself
is the outputs. Where the reference's result depends on the order of its arithmetic (a matmul, a
reduction), the float32 reference differs from the float64 answer by rounding errors that are particular
to its kernels' order; an own kernel sums in its own order and makes errors of its own, of the same size
and unrelated. Outputs equal to the reference's float32 result, bit for bit or within a small fraction of
those errors, come from the reference's own kernels: the result is flagged for a person's review and earns
no speed until cleared.

Ops whose float32 result is the float64 answer rounded once (elementwise arithmetic, a copy) leave
nothing to tell apart: every honest kernel matches the reference bit for bit there, so such outputs are
never held against a candidate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

MIN_ORDER_ULPS = 2.0  # the reference's own error beyond correct rounding, RMS in units of its last place, at least
MIN_ORDER_SHARE = 0.2  # the share of elements the reference's order moves off the correctly rounded answer
# Ops that accumulate (their result depends on the order of a sum): only a reference that calls one has an
# order of its own to recognise. An elementwise formula written out as the reference writes it (a fused GELU)
# rounds the same way in an own kernel, bit for bit; that is no replay.
ACCUMULATING = ("mm", "matmul", "conv", "sum", "mean", "softmax", "norm", "var", "std", "cumsum", "cumprod",
                "prod", "linear", "einsum", "dot", "mv", "logsumexp", "attention", "pool", "reduce",
                "embedding_bag", "lstm", "gru", "rnn")
ECHO_LIMIT = 0.05  # the candidate's distance from the reference's float32 result, relative to the reference's own error


@dataclass(frozen=True)
class Echo:
    """How far a candidate's outputs lie from the reference's float32 outputs (`distance`), against how far
    those lie from the float64 answer beyond correct rounding (`order_error`): RMS over floating outputs."""

    distance: float
    order_error: float
    order_ulps: float
    order_share: float

    @property
    def ratio(self) -> float:
        return self.distance / self.order_error if self.order_error > 0 else math.inf

    @property
    def telling(self) -> bool:
        """Whether the reference's order leaves errors large and common enough to recognise."""
        return self.order_ulps >= MIN_ORDER_ULPS and self.order_share >= MIN_ORDER_SHARE

    @property
    def replayed(self) -> bool:
        return self.telling and self.ratio < ECHO_LIMIT


def echo(got: list, native: list, wide: list | None) -> Echo | None:
    """The `Echo` of one call's outputs (None without a float64 answer or floating outputs to compare)."""
    if wide is None:
        return None
    distance = order = ulps = moved = count = 0.0
    for g, n, w in zip(got, native, wide, strict=False):
        if not all(isinstance(t, torch.Tensor) for t in (g, n, w)) or not n.is_floating_point():
            continue
        if g.shape != n.shape or n.shape != w.shape or n.numel() == 0:
            continue
        n64 = n.detach().double()
        rounded = w.detach().to(n.dtype).double()  # the float64 answer correctly rounded to the output's type
        error = n64 - rounded
        finite = torch.isfinite(error) & torch.isfinite(g.detach().double())
        if not bool(finite.any()):
            continue
        error = torch.where(finite, error, 0.0)
        ulp = torch.finfo(n.dtype).eps * n64.abs().clamp_min(torch.finfo(n.dtype).tiny)
        gap = torch.where(finite, g.detach().double().to(n64.device) - n64, 0.0)
        distance += float(gap.square().sum())
        order += float(error.square().sum())
        ulps += float((error / ulp).square().sum())
        moved += float((error != 0).sum())
        count += float(finite.sum())
    if count == 0:
        return None
    return Echo(math.sqrt(distance / count), math.sqrt(order / count), math.sqrt(ulps / count), moved / count)


def accumulates(ops: set[str]) -> bool:
    """Whether any of the reference's own ops (as the judge profiled it) sums in an order of its own."""
    return any(part in op.removeprefix("aten::") for op in ops for part in ACCUMULATING)


def replay_flag(echoes: list[Echo | None]) -> str | None:
    """The reason to flag a candidate whose every telling correctness call echoed the reference (None
    where none was telling, or any one was not an echo)."""
    telling = [e for e in echoes if e is not None and e.telling]
    if not telling or not all(e.replayed for e in telling):
        return None
    worst = max(telling, key=lambda e: e.ratio)
    return (f"its outputs carry the reference's own rounding errors on all {len(telling)} order-sensitive "
            f"correctness calls (distance {worst.ratio:.3f}× of the reference's own error; an own kernel's "
            f"order makes errors of its own): the work looks like the reference's ops, whatever its "
            f"process reported of the ops it ran")
