"""`python -m engine.untrusted.fastinline.prebuild FILE [--pch DIR] [--torch]`: the verifier's load_inline
prebuild (`engine.untrusted.fastinline.torch_prebuild`: run the candidate's module once, inside its sandbox, so its
extensions build into TORCH_EXTENSIONS_DIR) with each extension built by the fast build, torch's own
build where the fast one cannot; with `--torch`, torch's build alone (timed the same way, for comparison).

The shared precompiled headers are read from DIR, which this process sees read-only. Each build is
written as a JSON line to `TORCH_EXTENSIONS_DIR/builds.jsonl` (which path built it, how long it took, why
the fast build did not) and a fast-built library gets the stamp the runner's `prebuilt.install` finds.
Exit status 3 means a build failed, as for the runner's program.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from engine.untrusted.fastinline.extension import FastBuild
from engine.untrusted.fastinline.hook import BuildRecord, install
from engine.untrusted.fastinline.torch_flags import ensure_cuda_home

RECORDS = "builds.jsonl"


def record(entry: BuildRecord, fast: FastBuild | None, folder: Path) -> None:
    """Log one extension's build: a JSON line beside the builds, a line on stderr, a stamp if fast-built."""
    from engine.untrusted.runner.prebuilt import write_stamp

    if entry.path == "fast" and entry.ok and fast is not None:
        write_stamp(folder, fast.route, fast.seconds)
    with (Path(os.environ.get("TORCH_EXTENSIONS_DIR", ".")) / RECORDS).open("a") as out:
        out.write(json.dumps(dataclasses.asdict(entry)) + "\n")
    how = f"fast ({entry.route}{', shared header' if entry.shared_header else ''})" if entry.path == "fast" \
        else "torch's build"
    why = f" (fast build: {entry.reason})" if entry.reason else ""
    print(f"load_inline {entry.name}: {how}, {entry.seconds:.1f} s{'' if entry.ok else ', failed'}{why}",
          file=sys.stderr)


def install_timing() -> None:
    """torch's own build, timed and recorded like a fast one."""
    from torch.utils import cpp_extension

    original = cpp_extension._run_ninja_build

    def run_ninja_build(build_directory: str, verbose: bool, error_prefix: str) -> None:
        started, ok = time.perf_counter(), False
        try:
            original(build_directory, verbose, error_prefix)
            ok = True
        finally:
            record(BuildRecord(Path(build_directory).name, "torch", time.perf_counter() - started, reason="off",
                               ok=ok), None, Path(build_directory))

    cpp_extension._run_ninja_build = run_ninja_build


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="prebuild")
    parser.add_argument("path")
    parser.add_argument("--pch", type=Path, default=None)
    parser.add_argument("--torch", action="store_true", help="torch's own build only")
    args = parser.parse_args(argv)
    ensure_cuda_home()
    if args.torch:
        install_timing()
    else:
        install(args.pch, record)
    from engine.untrusted.fastinline.torch_prebuild import main as run_candidate

    return run_candidate([args.path])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
