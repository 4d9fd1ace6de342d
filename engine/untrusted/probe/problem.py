"""`python -m engine.untrusted.probe FILE PARAMS_JSON [--forward]`: an imported problem's own code,
run once inside the sandbox to prove it works: its module at one configuration's sizes, get_inputs,
get_init_inputs, the Model, optionally its forward (for real, on the CPU). `--c LIBRARY ENTRY` instead
loads a compiled C reference and looks its entry point up (loading a library runs its constructors: also
hostile until proven otherwise). `--c-check FOLDER` runs an imported C program's problem as the harness
will: its inputs.py and its reference at every configuration (`probe_c_check`). Prints one JSON line;
the caller (engine.problem_import.probe) turns failure into a message that names the file. `--serve MEMORY_MB`
probes many files, torch imported once (`engine.untrusted.probe.serve`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path


def probe_pytorch(path: str, params: dict, run_forward: bool) -> dict:
    import torch

    from engine.wire.reference_module import load_module

    stage = "loading the file"
    try:
        module = load_module(Path(path).read_text(), params, filename=Path(path).name)
        for name in ("Model", "get_inputs", "get_init_inputs"):
            if not hasattr(module, name):
                return {"ok": False, "error": f"missing {name}"}
        stage = "get_init_inputs()"
        init = module.get_init_inputs()
        stage = "get_inputs()"
        inputs = module.get_inputs()
        stage = "Model(*get_init_inputs())"
        torch.manual_seed(0)
        model = module.Model(*init)
        result = {"ok": True, "inputs": [list(getattr(t, "shape", ())) for t in inputs]}
        if run_forward:
            stage = "Model.forward(*get_inputs())"
            started = time.perf_counter()
            with torch.no_grad():
                out = model(*inputs)
            result["forward_s"] = time.perf_counter() - started
            outs = out if isinstance(out, list | tuple) else [out]
            result["outputs"] = [list(getattr(t, "shape", ())) for t in outs]
        return result
    except Exception as exc:  # noqa: BLE001 - the problem's own failure is the message
        return {"ok": False, "error": f"{stage} raised {type(exc).__name__}: {exc}"}


def probe_c(library: str, entry: str) -> dict:
    import ctypes

    try:
        getattr(ctypes.CDLL(library), entry)
    except OSError as exc:
        return {"ok": False, "error": f"does not load: {exc}"}
    except AttributeError:
        return {"ok": False, "error": f"defines no function {entry!r}"}
    return {"ok": True}


def _call_c(function, specs: list, values: dict) -> float:
    started = time.perf_counter()
    function(*[values[s.name].ctypes.data if s.is_array else values[s.name] for s in specs])
    return time.perf_counter() - started


def _differs(got, expected) -> float | None:
    """None where equal to a few units in the last place of `expected`'s type (libm and numpy may round a
    sine differently), else the largest difference."""
    import numpy as np

    got, expected = np.asarray(got).reshape(-1), np.asarray(expected).reshape(-1)
    if got.size != expected.size:
        return float("inf")
    ulp = float(np.finfo(expected.dtype).eps) if expected.dtype.kind == "f" else 0.0
    a, b = got.astype(np.float64), expected.astype(np.float64)
    close = np.abs(a - b) <= 8 * ulp * np.maximum(np.abs(a), np.abs(b))
    same = (a == b) | close | (np.isnan(a) & np.isnan(b))
    return None if bool(same.all()) else float(np.nanmax(np.abs(a - b)))


def _sensitivity(function, specs: list, values: dict, tolerance) -> dict:
    """Outputs that move beyond the problem's tolerance when the floating-point inputs move by a few units in
    the last place (what another rounding, a fused multiply-add, does): name -> elements out of tolerance."""
    import numpy as np

    rtol, atol = tolerance
    runs = []
    for nudge in (0, 1):
        rng = np.random.default_rng(7)
        given = {}
        for s in specs:
            value = values[s.name]
            if isinstance(value, np.ndarray) and value.dtype.kind == "f" and nudge:
                eps = np.finfo(value.dtype).eps
                value = (value * (1 + 4 * eps * rng.uniform(-1, 1, value.shape))).astype(value.dtype)
            given[s.name] = value.copy() if isinstance(value, np.ndarray) else value
        _call_c(function, specs, given)
        runs.append(given)
    moved = {}
    for s in specs:
        if s.is_array and s.intent != "in" and runs[0][s.name].dtype.kind == "f":
            a, b = runs[0][s.name].astype(np.float64), runs[1][s.name].astype(np.float64)
            bad = int(np.count_nonzero(~(np.abs(a - b) <= atol + rtol * np.abs(a))))
            if bad:
                moved[s.name] = bad
    return moved


def _copy(values: dict) -> dict:
    return {k: (v.copy() if hasattr(v, "copy") else v) for k, v in values.items()}


def _drift(specs: list, ours: dict, twin: dict, tolerance, into: dict) -> None:
    """Fold into `into` how far each floating-point output of the twin build lies from the reference's on the
    same inputs: name -> [elements beyond the tolerance (the most of any run), elements, largest difference, largest
    relative difference]."""
    import numpy as np

    rtol, atol = tolerance
    for s in specs:
        if not (s.is_array and s.intent != "in" and ours[s.name].dtype.kind == "f"):
            continue
        a, b = ours[s.name].astype(np.float64), twin[s.name].astype(np.float64)
        with np.errstate(all="ignore"):
            diff = np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.abs(a - b))
            beyond = int(np.count_nonzero(~(diff <= atol + rtol * np.abs(a))))
            finite = np.nan_to_num(diff, nan=np.inf)
            largest = float(finite.max()) if finite.size else 0.0
            relative = float((finite / (np.abs(a) + (atol or 1e-300))).max()) if finite.size else 0.0
        seen = into.setdefault(s.name, [0, 0, 0.0, 0.0])
        into[s.name] = [max(seen[0], beyond), int(a.size), max(seen[2], largest), max(seen[3], relative)]


def probe_c_check(folder: str) -> dict:
    """An imported C program's problem, end to end on the CPU. Per configuration: inputs.py's
    `own_initialisation` against the arrays the compiled program made (`before_*.npy`; arrays that differ
    between two generators are random and only counted), the library on the program's arrays against what
    its own kernel left (`after_*.npy`), then the library on `make_inputs` of each seed (outputs must be
    finite), timed. Where `rounded.so` is there too (the same reference built to round otherwise: fused
    multiply-adds, reordered sums), it runs beside the reference on the program's arrays and on each seed's, and
    `rounding` says how far apart their outputs lie (`_drift`). With `"port": true` in spec.json the library is
    the CUDA port emulated on the CPU and only its results are checked: run apart, so that a port that crashes
    cannot hide the reference's."""
    import ctypes
    import runpy

    import numpy as np

    from engine.wire.c_inputs import NUMPY_TYPES, ArgSpec, make_inputs

    base = Path(folder)
    spec = json.loads((base / "spec.json").read_text())
    port = bool(spec.get("port"))
    module = runpy.run_path(str(base / "inputs.py"))
    scalars = {"int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double}
    library = ctypes.CDLL(str(base / ("port.so" if port else "reference.so")))
    twin_library = ctypes.CDLL(str(base / "rounded.so")) if not port and (base / "rounded.so").exists() else None
    tolerance = spec.get("tolerance", (1e-7, 1e-9))
    results = {}
    for config in spec["configs"]:
        name, params = config["name"], config["params"]
        specs = [ArgSpec(**a) for a in config["args"]]
        out = {"init_mismatch": {}, "output_mismatch": {}, "non_finite": [], "random": [], "sensitive": {},
               "rounding": {}, "seconds": None}
        results[name] = out
        stage = "inputs.py's own_initialisation"
        try:
            function = getattr(library, spec["entry"])
            function.restype = None
            function.argtypes = [ctypes.c_void_p if s.is_array else scalars[s.base_type] for s in specs]
            twin = None
            if twin_library is not None:
                twin = getattr(twin_library, spec["entry"])
                twin.restype, twin.argtypes = None, function.argtypes
            with np.errstate(all="ignore"):
                own = module["own_initialisation"](dict(params), np.random.default_rng(1))
                other = module["own_initialisation"](dict(params), np.random.default_rng(2))
            values = {}
            for s in specs:
                if not s.is_array:
                    values[s.name] = s.value
                    continue
                array = np.ascontiguousarray(np.asarray(own[s.name]).reshape(-1), dtype=NUMPY_TYPES[s.base_type])
                expected = base / f"before_{name}_{s.name}.npy"
                program = np.load(expected) if expected.exists() else None
                values[s.name] = array if program is None else np.ascontiguousarray(program, NUMPY_TYPES[s.base_type])
                if s.intent == "out":  # what it held before the call is never read (and may be garbage)
                    continue
                if _differs(own[s.name], other[s.name]) is not None:
                    out["random"].append(s.name)
                elif program is not None and (diff := _differs(array, program)) is not None:
                    out["init_mismatch"][s.name] = diff
            complete = all((base / f"before_{name}_{s.name}.npy").exists() for s in specs if s.is_array)
            if complete and not port:
                stage = "the reference on inputs a few units in the last place away"
                out["sensitive"] = _sensitivity(function, specs, values, tolerance)
            if complete and twin is not None:
                stage = "the reference built to round otherwise, on the program's own inputs"
                ours, theirs = _copy(values), _copy(values)
                _call_c(function, specs, ours)
                _call_c(twin, specs, theirs)
                _drift(specs, ours, theirs, tolerance, out["rounding"])
            stage = f"the {'port' if port else 'reference'} on the program's own inputs"
            if complete:
                _call_c(function, specs, values)
                for s in specs:
                    expected = base / f"after_{name}_{s.name}.npy"
                    if s.is_array and s.intent != "in" and expected.exists():
                        diff = _differs(values[s.name], np.load(expected))
                        if diff is not None:
                            out["output_mismatch"][s.name] = diff
            if port:
                continue
            stage = "the reference on make_inputs"
            seconds = []
            for seed in config["seeds"]:
                values = make_inputs(specs, params, seed, str(base / "inputs.py"))
                theirs = _copy(values) if twin is not None else None
                seconds.append(_call_c(function, specs, values))
                if theirs is not None:
                    _call_c(twin, specs, theirs)
                    _drift(specs, values, theirs, tolerance, out["rounding"])
                out["non_finite"] += [s.name for s in specs if s.is_array and s.intent != "in"
                                      and values[s.name].dtype.kind == "f" and not np.isfinite(values[s.name]).all()]
            out["non_finite"] = sorted(set(out["non_finite"]))
            out["seconds"] = min(seconds) if seconds else None
        except Exception as exc:  # noqa: BLE001 - the problem's own failure is the message
            out["error"] = f"{stage} raised {type(exc).__name__}: {exc}"
    return {"ok": True, "configs": results}


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--serve":
        from engine.untrusted.probe.serve import serve

        return serve(int(argv[1]) if len(argv) > 1 else 0)
    if argv and argv[0] == "--c":
        result = probe_c(argv[1], argv[2])
    elif argv and argv[0] == "--c-check":
        result = probe_c_check(argv[1])
    else:
        result = probe_pytorch(argv[0], json.loads(argv[1]), "--forward" in argv[2:])
    print(json.dumps(result), flush=True)
    return 0

