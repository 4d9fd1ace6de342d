"""`python -m engine.verify.runner.probe FILE PARAMS_JSON [--forward]`: an imported problem's own code,
run once inside the sandbox to prove it works: its module at one configuration's sizes, get_inputs,
get_init_inputs, the Model, optionally its forward (for real, on the CPU). `--c LIBRARY ENTRY` instead
loads a compiled C reference and looks its entry point up (loading a library runs its constructors: also
hostile until proven otherwise). Prints one JSON line; the caller (engine.problems.probe) turns failure
into a message that names the file. `--serve MEMORY_MB` probes many files, torch imported once
(`probe_serve`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def probe_pytorch(path: str, params: dict, run_forward: bool) -> dict:
    import torch

    from engine.verify.wire.reference_module import load_module

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


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--serve":
        from engine.verify.runner.probe_serve import serve

        return serve(int(argv[1]) if len(argv) > 1 else 0)
    if argv and argv[0] == "--c":
        result = probe_c(argv[1], argv[2])
    else:
        result = probe_pytorch(argv[0], json.loads(argv[1]), "--forward" in argv[2:])
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
