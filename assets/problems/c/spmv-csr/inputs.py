import numpy as np


def make_inputs(params, rng):
    """CSR structure with exactly nnz entries and heavy-tailed row lengths (log-normal
    weights; some rows empty, a few very long). Columns are uniform and sorted per row."""
    nrows, ncols, nnz = params["nrows"], params["ncols"], params["nnz"]
    w = rng.lognormal(0.0, 1.0, nrows)
    counts = np.floor(w * (nnz / w.sum())).astype(np.int64)
    rest = nnz - int(counts.sum())
    counts[rng.choice(nrows, size=rest, replace=False)] += 1
    row_ptr = np.zeros(nrows + 1, dtype=np.int64)
    np.cumsum(counts, out=row_ptr[1:])
    key = np.repeat(np.arange(nrows, dtype=np.int64) * ncols, counts)
    key += rng.integers(0, ncols, size=nnz, dtype=np.int64)
    key.sort()
    col_idx = (key % ncols).astype(np.int32)
    return {"row_ptr": row_ptr.astype(np.int32), "col_idx": col_idx}
