"""`python -m engine.untrusted.fastinline.pch_job OUT [--extra-cflags JSON] [--extra-include-paths JSON]`:
build the shared precompiled header for torch's main.cpp flags with these extras into OUT/<key>/.

Runs in a sandbox of its own (the extras are a candidate's strings, handed to a compiler) and never runs
candidate code, so what it writes may be shared by every later build. Prints one JSON line: the key,
the seconds the compile took and, on failure, the compiler's output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from engine.untrusted.fastinline.pch import HEADER, HEADER_TEXT, header_command, pch_key
from engine.untrusted.fastinline.torch_flags import torch_build_plan


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--extra-cflags", default="[]")
    parser.add_argument("--extra-include-paths", default="[]")
    args = parser.parse_args(argv)
    plan = torch_build_plan(json.loads(args.extra_cflags), (), json.loads(args.extra_include_paths))
    flags = plan.host_flags()
    key = pch_key(plan.cxx, flags)
    folder = args.out / key
    folder.mkdir(parents=True, exist_ok=True)
    header = folder / HEADER
    header.write_text(HEADER_TEXT)
    started = time.perf_counter()
    done = subprocess.run(header_command(plan.cxx, flags, header), capture_output=True, text=True)
    seconds = time.perf_counter() - started
    (folder / "flags.json").write_text(json.dumps({"cxx": plan.cxx, "flags": flags, "seconds": seconds}))
    print(json.dumps({"key": key, "ok": done.returncode == 0, "seconds": round(seconds, 2),
                      "log": (done.stdout + done.stderr)[-4000:]}))
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
