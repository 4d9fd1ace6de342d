"""`python -m engine.untrusted.fastinline.torch_prebuild FILE`: run a load_inline candidate's module once so its
extensions build into TORCH_EXTENSIONS_DIR, ahead of the GPU and inside the sandbox (it is the
candidate's own code that runs). Errors after the builds are ignored: only the build products
matter here; the runner reports real load errors. Exit status 3 means a build failed.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    path = argv[0]
    namespace = {"__name__": "candidate", "__file__": path}
    try:
        exec(compile(Path(path).read_text(), path, "exec"), namespace)  # noqa: S102 - sandboxed build process
    except Exception as exc:  # noqa: BLE001 - only the build products matter
        print(f"module raised: {type(exc).__name__}: {exc}", file=sys.stderr)
        if "Error building extension" in str(exc):
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
