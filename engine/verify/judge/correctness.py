"""Is an output right? Elementwise against a float64 reference, with a tolerance that follows the arithmetic.

The allowance per element is `atol + rtol·|ref| + |ref_native − ref| + ORDER_SCALE·u·magnitude`:
- `|ref_native − ref|` is one sample of the reference library's own rounding at that element. It is not a
  bound: where cuBLAS happened to round well, any other honest order would fail on it alone.
- `magnitude` is the float64 model run on |inputs| with |parameters| (for a product or a sum, Σ|aᵢ||bᵢ|,
  the componentwise condition scale of the result), and `u` the unit roundoff of the problem's dtype: every
  honest order of an fp32 computation (serial over K = 131072, tiled, split-K with atomics, trees) rounds
  within a few units of u·Σ|aᵢbᵢ| at each element, while TF32 or half-precision arithmetic for an fp32
  problem lands hundreds to thousands of those units away, and is named as such.
Errors are reported in units of that honest scale. NaN never passes, even where the reference is NaN.
Torch only: works on CPU and GPU tensors.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from engine.wire.inputs import as_list
from engine.wire.poison import poisoned_mask

UNIT_ROUNDOFF = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float64: 2.0**-53}
ORDER_SCALE = 8.0  # honest-rounding units allowed: a serial fp32 sum over K = 131072 was off by 0.4 of one
REDUCED_PRECISION_UNITS = 16.0  # a median error past this many: the size TF32 / fp16 / bf16 arithmetic gives
# (honest fp32 orders of a K = 131072 matmul: 0.01 units at most; TF32 inputs: 40 median, 129 worst)


@dataclass
class Comparison:
    ok: bool
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    first_mismatch: str | None = None
    message: str = ""
    unwritten: int = 0  # elements still holding the poison pattern
    total: int = 0
    max_scaled_error: float | None = None  # the worst error in units of the honest rounding scale u·magnitude


def _index(flat: int, shape: tuple[int, ...]) -> list[int]:
    index = []
    for size in reversed(shape or (1,)):
        index.append(flat % size)
        flat //= size
    return list(reversed(index))[: len(shape)] if shape else []


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def compare_one(got, ref: torch.Tensor, ref_native: torch.Tensor | None, rtol: float, atol: float,
                label: str = "output 0", magnitude: torch.Tensor | None = None) -> Comparison:
    """Compare one output tensor; `ref` is the float64 (or exact-type) reference, `magnitude` the float64
    model on |inputs| (None: no honest-rounding scale for this output)."""
    if not isinstance(got, torch.Tensor):
        return Comparison(False, message=f"{label} is a {type(got).__name__}, expected a tensor")
    expected_dtype = ref_native.dtype if ref_native is not None else ref.dtype
    if tuple(got.shape) != tuple(ref.shape):
        return Comparison(False, message=f"{label} has shape {list(got.shape)}, expected {list(ref.shape)}")
    if got.dtype != expected_dtype:
        return Comparison(False, message=f"{label} has dtype {got.dtype}, expected {expected_dtype}")
    total = ref.numel()
    if total == 0:
        return Comparison(True, 0.0, 0.0, total=0)
    ref64, got64 = ref.to(torch.float64), got.to(torch.float64)
    diff = (got64 - ref64).abs()
    ref_abs = ref64.abs()
    if got.is_floating_point() and bool(torch.isinf(ref64).any()):
        diff = torch.where(torch.isinf(ref64) & (got64 == ref64), torch.zeros_like(diff), diff)
        ref_abs = ref_abs.nan_to_num(0.0, posinf=0.0)
    allowed = atol + rtol * ref_abs if got.is_floating_point() else torch.full_like(diff, atol)
    if ref_native is not None and ref_native.is_floating_point() and ref_native.dtype != torch.float64:
        allowed = allowed + (ref_native.to(torch.float64) - ref64).abs().nan_to_num(0.0, posinf=0.0)
    scale = _honest_scale(got, magnitude)
    if scale is not None:
        allowed = allowed + ORDER_SCALE * scale
    bad = ~(diff <= allowed)  # NaN in diff (NaN output, or NaN reference) is never <= anything
    n_bad = int(bad.sum())
    finite = diff.nan_to_num(float("inf")) if n_bad else diff
    max_abs = float(finite.max())
    max_rel = float((finite / (ref_abs + (atol if atol > 0 else 1e-300))).max())
    max_scaled = float((finite / scale.clamp_min(1e-300)).max()) if scale is not None else None
    if n_bad == 0:
        return Comparison(True, max_abs, max_rel, total=total, max_scaled_error=max_scaled)
    unwritten = int(poisoned_mask(got).sum()) if got.is_floating_point() else 0
    flat = int(bad.reshape(-1).nonzero()[0, 0])
    index = _index(flat, tuple(ref.shape))
    got_value, ref_value = float(got64.reshape(-1)[flat]), float(ref64.reshape(-1)[flat])
    where = f"{label} at {index}: got {_fmt(got_value)}, expected {_fmt(ref_value)}"
    message = f"{n_bad} of {total} elements differ; first: {where}"
    if unwritten:
        message += f"; {unwritten} elements were never written (still hold the poison/scrub pattern)"
    elif scale is not None:
        message += _in_honest_units(finite, scale, bad, got.dtype)
    return Comparison(False, max_abs, max_rel, where, message, unwritten, total, max_scaled)


def _honest_scale(got, magnitude: torch.Tensor | None) -> torch.Tensor | None:
    """u·magnitude per element, where the output is floating point and the magnitude fits it."""
    if magnitude is None or not got.is_floating_point() or tuple(magnitude.shape) != tuple(got.shape):
        return None
    u = UNIT_ROUNDOFF.get(got.dtype)
    return None if u is None else u * magnitude.to(torch.float64).abs().nan_to_num(0.0, posinf=0.0)


def _in_honest_units(diff: torch.Tensor, scale: torch.Tensor, bad: torch.Tensor, dtype: torch.dtype) -> str:
    """The wrong elements' errors in units of honest rounding, and what that error looks like."""
    units = (diff / scale.clamp_min(1e-300))[bad]
    finite = units[torch.isfinite(units)]
    if finite.numel() == 0:
        return ""
    worst, typical = float(finite.max()), float(finite.median())
    words = (f"; errors of {typical:.3g} (median) to {worst:.3g} units of honest {str(dtype).removeprefix('torch.')} "
             f"rounding (u·Σ|terms|), {ORDER_SCALE:g} allowed")
    if dtype == torch.float32 and typical >= REDUCED_PRECISION_UNITS:
        words += ": the size of error TF32 or half-precision arithmetic gives, where the problem is float32"
    return words


def compare(got, ref, ref_native, rtol: float, atol: float, labels: list[str] | None = None,
            magnitude=None) -> Comparison:
    """Compare a model's outputs (a tensor or a tuple of them) element by element; the worst error wins."""
    gots, refs = as_list(got), as_list(ref)
    labels = labels or [f"output {i}" for i in range(len(refs))]
    natives = as_list(ref_native) if ref_native is not None else [None] * len(refs)
    scales = as_list(magnitude) if magnitude is not None else [None] * len(refs)
    if len(scales) != len(refs):
        scales = [None] * len(refs)
    if len(gots) != len(refs):
        return Comparison(False, message=f"returned {len(gots)} outputs, expected {len(refs)}")
    combined = Comparison(True, 0.0, 0.0)
    for i, (g, r, n, m) in enumerate(zip(gots, refs, natives, scales, strict=True)):
        one = compare_one(g, r, n, rtol, atol, label=labels[i],
                          magnitude=m if isinstance(m, torch.Tensor) else None)
        combined.unwritten += one.unwritten
        combined.total += one.total
        for attr in ("max_abs_error", "max_rel_error", "max_scaled_error"):
            value = getattr(one, attr)
            if value is not None:
                setattr(combined, attr, max(getattr(combined, attr) or 0.0, value))
        if not one.ok and combined.ok:
            combined.ok, combined.first_mismatch, combined.message = False, one.first_mismatch, one.message
    return combined


def looks_cached(comparison: Comparison, out, previous_out, ref, previous_ref, previous_ok: bool = True) -> bool:
    """Two calls on different inputs (same buffers, new values) returned bitwise-identical outputs, the first
    right and the second wrong: the earlier answer came back.

    An output never written holds the same scrub pattern on every call: that is the correctness failure's
    "never written" (`comparison` says so), not a cache. Nor is an output that is wrong both times (a
    constant wrong scalar is wrong, and named so), or right this time.
    """
    if previous_out is None or (comparison.total and comparison.unwritten >= comparison.total):
        return False
    if comparison.ok or not previous_ok:
        return False
    return same_values(out, previous_out) and not same_values(ref, previous_ref)


def same_values(a, b) -> bool:
    """Bitwise equality of two outputs (NaN equal to NaN): the result-caching test."""
    la, lb = as_list(a), as_list(b)
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb, strict=True):
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor) or x.shape != y.shape:
            return False
        if x.dtype != y.dtype or not torch.equal(x.reshape(-1).view(torch.uint8), y.reshape(-1).view(torch.uint8)):
            return False
    return True
