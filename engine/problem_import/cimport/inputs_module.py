"""The text of an imported C problem's inputs.py: the program's own initialisation, translated, and the
`make_inputs(params, rng)` the judge and the runner call with each check's seed.

Each check multiplies every floating-point input array by a fresh factor from the check's generator (SCALE),
so no check sees the values of another and an answer cannot be stored ahead; scaling keeps what the
program's initialisation guarantees (a positive-definite matrix stays one, a triangle stays a triangle).
Integer arrays (graph weights, sequences, indices) are left as the program makes them. The file is meant to be
read and edited: SCALE = None makes every check use the program's values unchanged.
"""

from __future__ import annotations

import json

HELPERS = '''
def _int(x):
    """C's conversion to an integer type: toward zero."""
    x = np.asarray(x)
    return (np.trunc(x) if x.dtype.kind == "f" else x).astype(np.int64)[()]


def _idiv(a, b):
    """C's integer division: the quotient rounded toward zero."""
    q = np.abs(a) // np.abs(b)
    return (np.sign(a) * np.sign(b) * q)[()] if np.ndim(q) else int(np.sign(a) * np.sign(b) * q)


def _axis(lo, hi, axis, ndim):
    """A loop's values as an index grid on its own axis, covering every bound the outer loops give it."""
    lo, hi = np.asarray(lo), np.asarray(hi)
    if lo.size == 0 or hi.size == 0:
        values = np.arange(0)
    else:
        values = np.arange(int(lo.min()), int(hi.max()))
    shape = [1] * ndim
    shape[axis] = -1
    return values.reshape(shape)


def _ranges(array, index):
    """Basic slices for an index that is whole numbers and ranges along distinct grid axes, all in bounds
    (the common case: no copy of the grid is made), else None."""
    key, axes = [], []
    for i, n in zip(index, array.shape):
        if np.ndim(i) == 0:
            if not 0 <= i < n:
                return None
            key.append(int(i))
            continue
        long = [d for d, size in enumerate(np.shape(i)) if size != 1]
        flat = np.asarray(i).reshape(-1)
        if len(long) > 1 or flat.size == 0 or flat[0] < 0 or flat[-1] >= n or (
                flat.size > 1 and not (np.diff(flat) == 1).all()):
            return None
        key.append(slice(int(flat[0]), int(flat[-1]) + 1))
        axes.append(long[0] if long else -1)
    if len(set(axes)) != len(axes) or -1 in axes:
        return None
    return tuple(key), axes


def _at(array, *index):
    """array[index] for every point of the grid; indices of masked-out points are kept in bounds."""
    fast = _ranges(array, index)
    if fast is not None:
        key, axes = fast
        block = array[key].transpose(np.argsort(axes))
        shape = [1] * max(np.ndim(i) for i in index)
        for axis, size in zip(sorted(axes), block.shape):
            shape[axis] = size
        return block.reshape(shape)
    return array[tuple(np.clip(i, 0, n - 1) for i, n in zip(index, array.shape))]


def _put(array, index, value, mask):
    """array[index] = value wherever mask holds, over the whole grid."""
    fast = _ranges(array, index) if mask is True else None
    if fast is not None:
        key, axes = fast
        full = np.broadcast_shapes(np.shape(value), *(np.shape(i) for i in index))
        if all(size == 1 for axis, size in enumerate(full) if axis not in axes):
            block = np.broadcast_to(value, full).reshape([full[a] for a in sorted(axes)])
            array[key] = block.transpose(np.argsort(np.argsort(axes)))
            return
    *index, value, mask = np.broadcast_arrays(*index, value, mask)
    array[tuple(i[mask] for i in index)] = value[mask]


def _rand(rng, *grid):
    """rand(): an integer in [0, RAND_MAX], one per point of the grid, from the check's generator."""
    shape = np.broadcast_shapes(*(np.shape(g) for g in grid)) if grid else None
    return rng.integers(0, 2**31, size=shape)


def _uniform(rng, *grid):
    """drand48(): a double in [0, 1), one per point of the grid."""
    shape = np.broadcast_shapes(*(np.shape(g) for g in grid)) if grid else None
    return rng.random(size=shape)
'''

MAKE_INPUTS = '''
def make_inputs(params, rng):
    """The entry point's arrays for one check: the program's own, floating-point inputs scaled by a fresh factor."""
    with np.errstate(all="ignore"):
        values = own_initialisation(params, rng)
    out = {}
    for name, dtype in ARRAYS.items():
        array = np.ascontiguousarray(values[name]).reshape(-1).astype(dtype)
        if SCALE is not None and name in SCALED:
            array = (array * rng.uniform(*SCALE)).astype(dtype)
        out[name] = array
    return out
'''


def inputs_text(source: str, kernel: str, own: str, arrays: dict[str, str], scaled: list[str],
                scale: tuple[float, float] | None, note: str = "") -> str:
    """inputs.py for one problem: `own` is `own_initialisation` (engine.problem_import.cimport.numpy_init)."""
    doc = (f'"""Inputs of {kernel}, imported from {source}.\n\n'
           "`own_initialisation` is the program's own initialisation (main up to the kernel's call and what it\n"
           "calls), translated from C to numpy; the importer checked it against the compiled program at every\n"
           "configuration. `make_inputs` multiplies each floating-point input array by a fresh factor per check\n"
           "(SCALE), so that no check sees another's values; SCALE = None uses the program's own values unchanged.\n"
           + (f"\n{note}\n" if note else "") + '"""\n')
    lines = [doc, "import numpy as np", "",
             f"SCALE = {tuple(scale) if scale is not None else None!r}",
             f"ARRAYS = {json.dumps(arrays)}  # the entry point's arrays and their dtypes",
             f"SCALED = {tuple(scaled)!r}  # the input arrays SCALE applies to", "", HELPERS.strip("\n"), "", "",
             own.rstrip("\n"), "", MAKE_INPUTS.rstrip("\n")]
    return "\n".join(lines) + "\n"


def random_initialisation(sizes: list[str], arrays: dict[str, tuple[str, str, float, float]], why: str) -> str:
    """An `own_initialisation` that is not the program's: random values in the range the program's own take,
    for a program whose initialisation the translation does not cover. `arrays`: name -> (element count
    expression, dtype, lowest, highest value the program made)."""
    lines = ["def own_initialisation(params, rng):",
             f'    """NOT the program\'s own initialisation, which could not be translated ({why}): random values in',
             '    the range the program\'s own take. Replace it with the real one if the kernel needs more."""']
    lines += [f"    {name} = params[{name!r}]" for name in sizes]
    out = []
    for name, (count, dtype, low, high) in arrays.items():
        if dtype.startswith(("int", "uint")):
            draw = f"rng.integers({int(low)}, {int(high) + 1}, {count})"
        elif low == high:
            draw = f"np.full({count}, {low!r})"
        else:
            draw = f"rng.uniform({low!r}, {high!r}, {count})"
        out.append(f"{name!r}: {draw}.astype(np.{dtype})")
    lines.append("    return {" + ", ".join(out) + "}")
    return "\n".join(lines) + "\n"
