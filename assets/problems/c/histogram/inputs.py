import numpy as np


def make_inputs(params, rng):
    """Byte values in [0, 256): 30% uniform, 70% from a narrow peak, so a few bins are hot
    (realistic image data; stresses atomic contention)."""
    n = params["n"]
    data = rng.integers(0, 256, size=n, dtype=np.int32)
    hot = rng.random(n, dtype=np.float32) < 0.7
    peak = rng.standard_normal(int(hot.sum()), dtype=np.float32) * 20.0 + 100.0
    data[hot] = np.clip(np.rint(peak), 0, 255).astype(np.int32)
    return {"data": data}
