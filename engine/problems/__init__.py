"""Problems: the built-in library, KernelBench imports and uploads, imported C programs (`cimport`), validated
before use.

Offers `scan_all`/`get_problem` to read problems, `import_path` to bring new ones in, `validate`
to run a problem's own code in the sandbox at every configuration, and the `Problem`/`Config` records
(a configuration of an imported problem carries its `Signature`: shapes, dtypes, FLOPs and bytes).
"""

from engine.problems.importer import ImportReport, import_path
from engine.problems.library import (
    BUILTIN_DIR,
    LibraryScan,
    ProblemError,
    get_problem,
    load_problem,
    scan,
    scan_all,
)
from engine.problems.model import CArg, Config, Expectation, Implementation, Problem, Signature, ValueSpec
from engine.problems.probe import validate

__all__ = [
    "BUILTIN_DIR", "CArg", "Config", "Expectation", "ImportReport", "Implementation", "LibraryScan", "Problem",
    "ProblemError", "Signature", "ValueSpec", "get_problem", "import_path", "load_problem", "scan", "scan_all",
    "validate",
]
